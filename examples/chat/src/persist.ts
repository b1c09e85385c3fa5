import { indexedDBPersistence } from "agents-vue/persist";

/**
 * The browser keeps each conversation (IndexedDB): after a reload the last
 * transcript is on screen at once, and a message queued while the agent was
 * down is still queued, and goes out once it is back.
 */
export const persist = indexedDBPersistence();
