import { onScopeDispose, ref, watch } from "vue";

export interface Conversation {
  /** The agent instance name: one Durable Object, one transcript. */
  name: string;
  title: string;
}

const STORAGE_KEY = "agents-vue-demo:conversations";
const DEFAULTS: Conversation[] = [
  { name: "welcome", title: "Welcome" },
  { name: "trip-ideas", title: "Trip ideas" },
  { name: "scratchpad", title: "Scratchpad" }
];

function load(): Conversation[] {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as unknown;
    if (Array.isArray(stored) && stored.length > 0) return stored as Conversation[];
  } catch {
    // fall through to the defaults
  }
  return DEFAULTS.map((conversation) => ({ ...conversation }));
}

function nameFromHash(): string | undefined {
  const match = /^#\/c\/([\w-]+)$/.exec(location.hash);
  return match?.[1];
}

/**
 * The sidebar's conversations, kept in localStorage (shared by tabs), and the
 * current one, kept in the URL hash (`#/c/<name>`) so a second tab can open
 * the same conversation.
 */
export function useConversations() {
  const list = ref<Conversation[]>(load());
  const current = ref(nameFromHash() ?? list.value[0]!.name);

  const ensureListed = (name: string) => {
    if (!list.value.some((conversation) => conversation.name === name)) {
      list.value = [...list.value, { name, title: name }];
    }
  };
  ensureListed(current.value);

  watch(list, (value) => localStorage.setItem(STORAGE_KEY, JSON.stringify(value)), { deep: true });

  const select = (name: string) => {
    ensureListed(name);
    current.value = name;
    if (nameFromHash() !== name) history.pushState(null, "", `#/c/${name}`);
  };

  const create = () => {
    const name = `chat-${Math.random().toString(36).slice(2, 8)}`;
    list.value = [{ name, title: "New chat" }, ...list.value];
    select(name);
  };

  const rename = (name: string, title: string) => {
    const conversation = list.value.find((item) => item.name === name);
    if (conversation) conversation.title = title;
  };

  const onHashChange = () => {
    const name = nameFromHash();
    if (name && name !== current.value) select(name);
  };
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) list.value = load();
  };
  addEventListener("hashchange", onHashChange);
  addEventListener("popstate", onHashChange);
  addEventListener("storage", onStorage);
  onScopeDispose(() => {
    removeEventListener("hashchange", onHashChange);
    removeEventListener("popstate", onHashChange);
    removeEventListener("storage", onStorage);
  });

  return { list, current, select, create, rename };
}
