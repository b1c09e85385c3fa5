import type { PersistStore } from "../../../src/persist";

interface Operation {
  write: boolean;
  run: () => unknown;
  resolve: (value: unknown) => void;
}

/**
 * The browser's durable storage as the model's world owns it: one key-value
 * store that outlives every page of this client (`restart`), behind the
 * `PersistStore` interface `createChatPersistence` takes. As IndexedDB does,
 * every operation is asynchronous and they complete in the order they were
 * made (transactions on one object store are serialized); a value is cloned
 * when it is handed in. The world decides when the next one completes
 * (`land`). When the page dies (`kill`) the writes it had made but that had
 * not committed are lost, except for a prefix the world chooses (committed
 * just before the tab went: a transaction commits whole or not at all, and in
 * order); nothing of that page completes after that, and its later calls never
 * answer.
 */
export class WorldStore {
  readonly data = new Map<string, unknown>();
  /** Ids of the queued sends a committed write ever held (`q:` records). */
  readonly persistedSends = new Set<string>();
  private pending: Operation[] = [];
  private life = 0;

  /** Operations made and not completed yet. */
  get waiting(): number {
    return this.pending.length;
  }

  /** The store as one page sees it: dead once that page is killed. */
  handle(): PersistStore {
    const life = this.life;
    const operation = <T>(write: boolean, run: () => T): Promise<T> =>
      life !== this.life ? new Promise<T>(() => {}) : new Promise<T>((resolve) => this.pending.push({ write, run, resolve: resolve as (value: unknown) => void }));
    return {
      get: (key) => operation(false, () => structuredClone(this.data.get(key))),
      set: (key, value) => {
        const copy = structuredClone(value);
        return operation(true, () => {
          this.data.set(key, copy);
          if (key.startsWith("q:") && Array.isArray(copy)) for (const send of copy as Array<{ message?: { id?: string } }>) if (send.message?.id) this.persistedSends.add(send.message.id);
        });
      },
      delete: (key) => operation(true, () => void this.data.delete(key)),
      keys: () => operation(false, () => [...this.data.keys()])
    };
  }

  /** Completes the oldest operation. */
  land(): void {
    const next = this.pending.shift();
    if (next) next.resolve(next.run());
  }

  /** The page dies: of its writes not yet committed, the first `keep % (n + 1)` commit, the rest are lost. Returns [committed, lost]. */
  kill(keep: number): [number, number] {
    this.life++;
    const writes = this.pending.filter((operation) => operation.write);
    this.pending = [];
    const committed = keep % (writes.length + 1);
    for (const write of writes.slice(0, committed)) write.run();
    return [committed, writes.length - committed];
  }
}
