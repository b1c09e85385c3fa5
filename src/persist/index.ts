/**
 * `agents-vue/persist`: durable client state for `useAgentChat`'s `persist`
 * option. Per conversation it keeps the last settled transcript (shown at
 * once on the next mount) and the sends queued while offline (delivered
 * once, by one tab, after a reload or after the tab that queued them closed).
 */
import type { UIMessage } from "ai";
import type { ChatPersistence, ConversationStore, PersistedChat } from "../core/persistence";
import { type PersistStore, indexedDBStore } from "./idb";

export type { ChatPersistence, ConversationStore, PersistedChat } from "../core/persistence";
export { indexedDBStore, type PersistStore } from "./idb";

/** Options of {@link createChatPersistence} and {@link indexedDBPersistence}. */
export interface ChatPersistenceOptions {
  /**
   * How many conversations keep a cached transcript. When one more is
   * saved, the transcripts written longest ago are evicted (their queued
   * sends stay: they are never evicted). Default `20`.
   */
  maxConversations?: number;
  /** How many messages of a transcript are kept: the newest. Default `500`. */
  maxMessages?: number;
  /** Milliseconds a settled transcript waits before it is written (later changes replace it). Default `250`. */
  saveDelayMs?: number;
  /**
   * Read every kept transcript into memory as soon as the persistence is
   * created, so a chat that mounts after `ready` shows its cached transcript
   * in its very first render. Default `true`; with `false` each chat reads its
   * own when it mounts (a few milliseconds later).
   */
  preload?: boolean;
}

/** A {@link ChatPersistence} that can also be wiped. */
export interface WipeableChatPersistence extends ChatPersistence {
  /**
   * Resolves once the kept transcripts are in memory (`preload`). Await it
   * before `app.mount()` and the cached transcript is on screen in the first
   * frame; without it, a chat shows its cached copy as soon as the store answers.
   * Never rejects.
   */
  readonly ready: Promise<void>;
  /**
   * Deletes every kept transcript and queued send (e.g. on sign-out). Waits
   * for writes in progress first. Chats still mounted keep writing what
   * they show: unmount them before.
   */
  clear(): Promise<void>;
}

/** A queued send as stored: the message and the chat session that owns it (a Web Lock it holds while it lives). */
interface StoredSend {
  owner: string;
  message: UIMessage;
}

interface StoredTranscript {
  at: number;
  messages: UIMessage[];
}

const PREFIX = "agents-vue:";
const OWNER_LOCK = `${PREFIX}owner:`;
const INDEX_KEY = "index";
const transcriptKey = (key: string) => `t:${key}`;
const queueKey = (key: string) => `q:${key}`;

type Locks = LockManager | undefined;
const locksOf = (): Locks => (typeof navigator === "undefined" ? undefined : navigator.locks);

/** Runs `task` holding the exclusive Web Lock `name` (other tabs wait); without Web Locks it just runs. */
function withLock<T>(locks: Locks, name: string, task: () => Promise<T>): Promise<T> {
  return locks ? (locks.request(name, task) as Promise<T>) : task();
}

const noop = () => {};

const randomId = () =>
  typeof crypto !== "undefined" && typeof crypto.randomUUID === "function"
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

const warn = (what: string) => (error: unknown) =>
  console.warn(`[agents-vue] persist: could not ${what}:`, error instanceof Error ? error.message : error);

/** Plain JSON copies: what a store can always clone (reactive proxies and functions cannot be). */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const isMessage = (value: unknown): value is UIMessage =>
  typeof value === "object" && value !== null && typeof (value as UIMessage).id === "string" && Array.isArray((value as UIMessage).parts);

/**
 * Makes a {@link ChatPersistence} over any {@link PersistStore}. Pass the
 * result as `useAgentChat`'s `persist` option.
 *
 * How queued sends stay exactly-once across tabs: each chat session holds a
 * Web Lock of its own while it lives and stores its sends under its id. A
 * session adopts (takes over and sends) only sends whose owner's lock is no
 * longer held: a page that reloaded or closed. It looks when it opens, when
 * its socket opens, when another tab queues, and when an owner it saw lets
 * go of its lock. Adoption runs under a per-conversation lock, so two tabs
 * never adopt the same send; a send whose id the server already holds is
 * not sent again. Without Web Locks (very old browsers) a session adopts
 * every send it finds when it opens: keep one tab per conversation there.
 */
export function createChatPersistence(store: PersistStore, options: ChatPersistenceOptions = {}): WipeableChatPersistence {
  const maxConversations = Math.max(1, options.maxConversations ?? 20);
  const maxMessages = Math.max(1, options.maxMessages ?? 500);
  const saveDelayMs = options.saveDelayMs ?? 250;
  const inFlight = new Set<Promise<unknown>>();
  /** Transcripts read at creation (`preload`), each handed out once: the first chat of its conversation on this page. */
  const preloaded = new Map<string, UIMessage[]>();
  const ready =
    options.preload === false
      ? Promise.resolve()
      : (async () => {
          for (const stored of await store.keys()) {
            if (!stored.startsWith("t:")) continue;
            const messages = ((await store.get(stored)) as StoredTranscript | undefined)?.messages;
            if (Array.isArray(messages)) preloaded.set(stored.slice(2), messages);
          }
        })().catch(warn("read the cached transcripts"));
  const track = <T>(work: Promise<T>): Promise<T | void> => {
    const settled = work.catch(warn("write the chat's stored copy"));
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
    return settled;
  };

  /** Rule (size cap): the index keeps when each transcript was written; past `maxConversations` the oldest go. */
  const saveTranscript = (key: string, messages: readonly UIMessage[]) =>
    withLock(locksOf(), `${PREFIX}index`, async () => {
      preloaded.delete(key);
      const at = Date.now();
      await store.set(transcriptKey(key), { at, messages: plain(messages.slice(-maxMessages)) } satisfies StoredTranscript);
      const index = { ...((await store.get(INDEX_KEY)) as Record<string, number> | undefined), [key]: at };
      const evicted = Object.keys(index)
        .toSorted((a, b) => (index[b] ?? 0) - (index[a] ?? 0))
        .slice(maxConversations);
      for (const old of evicted) {
        delete index[old];
        await store.delete(transcriptKey(old));
      }
      await store.set(INDEX_KEY, index);
    });

  const open = <M extends UIMessage>(key: string, chat: PersistedChat<M>): ConversationStore<M> => {
    const locks = locksOf();
    const owner = randomId();
    const conversationLock = `${PREFIX}conversation:${key}`;
    const stop = new AbortController();
    let closed = false;
    let release: () => void = noop;
    // The session's own lock: while it is held, its stored sends are its own.
    const holding = new Promise<void>((granted) => {
      if (!locks) return granted();
      void locks
        .request(`${OWNER_LOCK}${owner}`, () => {
          granted();
          return new Promise<void>((done) => (release = done));
        })
        .catch((error: unknown) => {
          warn("hold the chat's lock")(error);
          granted();
        });
    });
    let chain: Promise<unknown> = holding;
    const then = (task: () => Promise<unknown>) => (chain = track(chain.then(task)));

    // The cached transcript first, not behind the lock: from memory when it was preloaded (the first render shows it),
    // else as soon as the store answers.
    const show = (messages: unknown) => {
      if (!closed && Array.isArray(messages)) chat.showCached(messages.filter(isMessage) as M[]);
    };
    const early = preloaded.get(key);
    preloaded.delete(key);
    if (early) show(early);
    else
      void store
        .get(transcriptKey(key))
        .then((record) => show((record as StoredTranscript | undefined)?.messages))
        .catch(warn("read the cached transcript"));

    const watched = new Set<string>();
    /** Whether the session that stored a send still lives (holds its lock); without Web Locks none is known to. */
    const lives = async () => {
      const held = locks ? new Set((await locks.query()).held?.map((lock) => lock.name)) : new Set<string>();
      return (send: StoredSend) => send.owner === owner || held.has(`${OWNER_LOCK}${send.owner}`);
    };
    /** Clears seen: an adoption that began before the latest hands nothing over. */
    let clears = 0;
    /** Rule (adopt the sends of a session that is gone): under the conversation's lock, so one session takes each. */
    const adopt = () => {
      const since = clears;
      then(() =>
        withLock(locks, conversationLock, async () => {
          if (closed || since !== clears) return;
          const stored = ((await store.get(queueKey(key))) as StoredSend[] | undefined) ?? [];
          const live = await lives();
          const adopted: M[] = [];
          for (const send of stored) {
            if (send.owner === owner) continue;
            if (live(send)) {
              watch(send.owner);
              continue;
            }
            send.owner = owner;
            if (isMessage(send.message)) adopted.push(send.message as M);
          }
          if (adopted.length === 0 || since !== clears) return;
          await store.set(queueKey(key), stored);
          chat.adopt(adopted);
        })
      );
    };
    /** Once a live owner's lock is free (its page closed), look again. */
    const watch = (other: string) => {
      if (!locks || watched.has(other)) return;
      watched.add(other);
      void locks
        .request(`${OWNER_LOCK}${other}`, { signal: stop.signal }, async () => {
          if (!closed) adopt();
        })
        .catch(() => {});
    };
    const updateQueue = (change: (sends: StoredSend[]) => StoredSend[] | Promise<StoredSend[]>) =>
      then(() =>
        withLock(locks, conversationLock, async () => {
          const sends = await change(((await store.get(queueKey(key))) as StoredSend[] | undefined) ?? []);
          await (sends.length > 0 ? store.set(queueKey(key), sends) : store.delete(queueKey(key)));
        })
      );

    const channel = typeof BroadcastChannel === "undefined" ? undefined : new BroadcastChannel(`${PREFIX}${key}`);
    channel?.addEventListener("message", () => adopt());
    adopt();

    let pending: readonly M[] | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      const messages = pending;
      pending = null;
      if (messages) void track(saveTranscript(key, messages));
    };

    return {
      transcript(messages) {
        if (closed) return;
        pending = messages;
        clearTimeout(timer);
        timer = setTimeout(flush, saveDelayMs);
      },
      queued(message) {
        if (closed) return;
        const copy = plain(message);
        const written = updateQueue((sends) => [...sends.filter((send) => send.message.id !== copy.id), { owner, message: copy }]);
        // Other tabs of this conversation learn of a new owner to watch.
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- a BroadcastChannel has no target origin
        void written.then(() => closed || channel?.postMessage("queued"));
      },
      done(id) {
        if (!closed) updateQueue((sends) => sends.filter((send) => send.message.id !== id));
      },
      cleared() {
        if (closed) return;
        clears++;
        // Rule (a clear empties the outbox): what a session that is gone left stored was sent before the clear.
        void updateQueue(async (sends) => sends.filter(await lives()));
      },
      opened() {
        if (!closed) adopt();
      },
      close() {
        if (closed) return;
        flush();
        closed = true;
        stop.abort();
        channel?.close();
        // The lock goes once this session's writes are done: then another session may adopt what it left.
        void chain.finally(() => release());
      }
    };
  };

  return {
    open,
    ready: ready.then(() => {}),
    async clear() {
      await Promise.all(inFlight);
      preloaded.clear();
      for (const key of await store.keys()) if (key === INDEX_KEY || /^[tq]:/.test(key)) await store.delete(key);
    }
  };
}

/**
 * A {@link ChatPersistence} over IndexedDB (database `"agents-vue"`, or
 * `databaseName`): the ready-made `persist` option. Create it once, at
 * module level, and pass it to every chat that should survive a reload. It
 * starts reading the kept transcripts at once; `await persist.ready` before
 * mounting the app puts the cached transcript in the first render. On the
 * server it is inert.
 */
export function indexedDBPersistence(options: ChatPersistenceOptions & { databaseName?: string } = {}): WipeableChatPersistence {
  return createChatPersistence(indexedDBStore(options.databaseName), options);
}
