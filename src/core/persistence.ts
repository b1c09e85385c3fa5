import type { UIMessage } from "ai";

/**
 * Durable client state for `useAgentChat`'s `persist` option: where a
 * conversation's last known transcript and its undelivered queued sends
 * live between page loads. `agents-vue/persist` makes one over IndexedDB
 * (`indexedDBPersistence()`) or over any key-value store
 * (`createChatPersistence(store)`); the chat itself only calls these hooks,
 * so an app that does not persist pays for nothing more.
 */
export interface ChatPersistence {
  /**
   * Starts keeping one conversation for one chat session. Called in the
   * browser only, once per session (a conversation switch closes the old one
   * and opens the next). `key` names the conversation: agent, instance name,
   * host, base path and path.
   */
  open<M extends UIMessage>(key: string, chat: PersistedChat<M>): ConversationStore<M>;
}

/** What a persistence may do to the chat session it was opened for. */
export interface PersistedChat<M extends UIMessage> {
  /**
   * Shows a cached transcript at once, flagged by `isCached`, until the
   * server's transcript arrives and replaces it. Ignored once anything
   * else is on screen or a server transcript came.
   */
  showCached(messages: M[]): void;
  /**
   * Puts sends persisted earlier (by this page before a reload, or by a tab
   * that closed) in front of the outbox. Each goes out once, in order; one
   * whose id the server's transcript already holds is not sent again.
   */
  adopt(messages: M[]): void;
}

/** The hooks a chat session calls on the conversation it keeps. */
export interface ConversationStore<M extends UIMessage> {
  /** The settled transcript (no reply streaming, the server's transcript in): keep it. */
  transcript(messages: readonly M[]): void;
  /** A message was queued (it waits for the connection): keep it until `done`. */
  queued(message: M): void;
  /** A queued message went out and its request ended, or it was dropped (a clear): forget it. */
  done(id: string): void;
  /**
   * The conversation was cleared (here or by a received clear): sends stored by sessions that are gone go too,
   * and an adoption already under way hands nothing over. Optional for stores written before it.
   */
  cleared?(): void;
  /** The socket opened: sends of tabs that closed meanwhile may be adopted. */
  opened(): void;
  /** The session ended: sends still queued stay kept for the next page or tab. */
  close(): void;
}
