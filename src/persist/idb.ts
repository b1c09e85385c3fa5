/** A small asynchronous key-value store: what `createChatPersistence` keeps its records in. */
export interface PersistStore {
  /** The value under `key`, or `undefined`. */
  get(key: string): Promise<unknown>;
  /** Stores a structured-cloneable value (the chat hands in plain JSON data). */
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  /** Every key in the store. */
  keys(): Promise<string[]>;
}

const STORE = "kv";

/**
 * A {@link PersistStore} over IndexedDB: one database (`name`, default
 * `"agents-vue"`) with one object store. Where IndexedDB does not exist
 * (server-side rendering, some private modes) it stores nothing and reads
 * nothing. The database opens on the first call.
 */
export function indexedDBStore(name = "agents-vue"): PersistStore {
  let opening: Promise<IDBDatabase> | undefined;
  const open = () =>
    (opening ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(name, 1);
      request.addEventListener("upgradeneeded", () => request.result.createObjectStore(STORE));
      request.addEventListener("success", () => {
        const db = request.result;
        // Another page upgrades or deletes the database (a wipe): let it, and open again next time.
        db.addEventListener("versionchange", () => {
          db.close();
          opening = undefined;
        });
        resolve(db);
      });
      request.addEventListener("error", () => {
        opening = undefined;
        reject(request.error ?? new Error(`could not open IndexedDB "${name}"`));
      });
    }));
  const run = async <T>(mode: IDBTransactionMode, call: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> => {
    const db = await open();
    return new Promise<T>((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const request = call(transaction.objectStore(STORE));
      const fail = () => reject(transaction.error ?? request.error ?? new Error("IndexedDB transaction failed"));
      // A read answers as soon as it has its value; a write once it is committed.
      if (mode === "readonly") request.addEventListener("success", () => resolve(request.result));
      else transaction.addEventListener("complete", () => resolve(request.result));
      transaction.addEventListener("error", fail);
      transaction.addEventListener("abort", fail);
    });
  };
  if (typeof indexedDB === "undefined") {
    return { get: async () => undefined, set: async () => {}, delete: async () => {}, keys: async () => [] };
  }
  return {
    get: (key) => run("readonly", (store) => store.get(key)),
    set: (key, value) => run("readwrite", (store) => store.put(value, key)).then(() => {}),
    delete: (key) => run("readwrite", (store) => store.delete(key)).then(() => {}),
    keys: () => run("readonly", (store) => store.getAllKeys()).then((keys) => keys.map(String))
  };
}
