import { onScopeDispose, ref } from "vue";

const STORAGE_KEY = "agents-vue-demo:stopped";
/** Enough for any demo session; the oldest ids drop off. */
const KEEP = 200;

function load(): string[] {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "[]") as unknown;
    return Array.isArray(stored) ? stored.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}

/**
 * The replies someone stopped, by message id, so the page can mark them
 * "Stopped". The transcript itself does not say a reply was cut short, so the
 * demo remembers it in localStorage (shared with other tabs, kept on reload).
 */
export function useStoppedReplies() {
  const ids = ref(new Set(load()));
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) ids.value = new Set(load());
  };
  addEventListener("storage", onStorage);
  onScopeDispose(() => removeEventListener("storage", onStorage));

  const mark = (id: string) => {
    const next = [...ids.value.add(id)].slice(-KEEP);
    ids.value = new Set(next);
    localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  };
  return { ids, mark };
}
