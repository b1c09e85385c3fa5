/** A transcript read this client made: when it left, and how often it was made again. */
export interface TranscriptRead {
  id: number;
  /** The clock when it left. */
  at: number;
  /** 1 for the first try; overtaken reads are made again up to `MAX_ATTEMPTS`. */
  attempt: number;
  /** Made after a reconnect or a stream end only when `resyncOnReconnect` is on; `always` after clears and rewrites. */
  always: boolean;
}

/** What becomes of a read's answer. */
export type Admission = "admit" | "retry" | "drop";

/** How many times a read is made again because a transcript frame overtook it. */
export const MAX_ATTEMPTS = 5;

/**
 * The server base: which messages the server is known to hold, and a clock
 * that moves on every transcript frame and every local replacement. A read
 * travels on another connection than the frames, so its answer may be older
 * than a frame that arrived while it was out; the clock tells.
 */
export class TranscriptBase {
  /** Ids seen arriving from the server (and own turns it stored): what `sendOnlyNewMessages` leaves out. */
  readonly known = new Set<string>();
  /**
   * Rule (a shell the server stores stays): empty reply shells the server is known to store, which
   * the "no empty replies" rule leaves on screen: an admitted read or frame holds them, or a list
   * this client sent carried them (the server writes a list as it comes; left out, a reply would be
   * stored after the messages sent behind it, in another order than shown here).
   */
  readonly shells = new Set<string>();
  /**
   * Rule (a send the server holds goes no more): ids any answer of this
   * chat's reads carried, admitted or not. An answer a local replacement or a
   * frame made stale for the screen still shows what the server held when it
   * answered: a send left by a page that died mid-request (`persist`) was
   * delivered if one did. Never cleared: the server held it once.
   */
  readonly delivered = new Set<string>();
  /** The newest read that came back with an answer (a failed one is made again, see `readAnswered`). */
  settledRead = 0;
  /**
   * The version of the transcript the base holds once the server stamps
   * versions (exact sync, `agents-vue/server`); `null` while it does not, and
   * the inference rules (held rewrites and clears, read-backs, overtaken
   * reads) stand in for it.
   */
  version: number | null = null;
  /** Exact sync: the transcript at `version`, as the server stored it. */
  messages: Array<{ id: string }> = [];
  /** The server sends its transcript when a socket connects (the ordered server half, Think): reconnects need no read. */
  pushes = false;
  /**
   * The server owns its history and ignores a transcript a client pushes: its
   * connect-time transcript carries no version (Think, issue 33; the ordered
   * server half versions it, `AIChatAgent` sends none).
   */
  serverOwned = false;
  /** The first load: waiting for the socket's first chat frame, the read that is out, or done. */
  firstLoad: "waiting" | TranscriptRead | "done" = "done";
  #clock = 0;
  /** Rule (what the server removed goes): each message a transcript of the server's held, with the newest read that had left then. */
  readonly #seenAt = new Map<string, number>();
  /** The newest read that had left when a list of this client's last went out, or a request of its ended. */
  #listAt = 0;
  /** The clock at the last local replacement (`setMessages`, a clear, a reset). */
  #replacedAt = 0;
  #reads = 0;

  /** A transcript frame arrived or this client replaced the transcript. */
  get moved(): boolean {
    return this.#clock > 0;
  }

  /** The newest read's id: a read is superseded once a newer one left. */
  get newestRead(): number {
    return this.#reads;
  }

  /** Moves on every transcript frame and local replacement (see `admit`). */
  get clock(): number {
    return this.#clock;
  }

  /** A transcript frame arrived. */
  frameArrived(): void {
    this.#clock++;
  }

  /** A transcript frame or an answered read showed what the server holds. */
  seen(messages: Iterable<{ id: string }>): void {
    for (const message of messages) this.#seenAt.set(message.id, this.#reads);
  }

  /** A list of this client's went out (a request, `setMessages`), or a request of its ended. */
  listWritten(): void {
    this.#listAt = this.#reads;
  }

  /**
   * Rule (what the server removed goes): the messages an admitted answer
   * lacks that the server held before the read left (a transcript of its
   * showed them). Another client's rewrite, or a list of this client's that
   * raced one, removed them; a merge must not keep them as if only this
   * screen had them. Not while `writing` (a request of this client's is
   * open), nor after one of its lists went out or its request ended since
   * the read left: the server may have served the read before it wrote that
   * list, which can write a message back.
   */
  removedBefore(read: TranscriptRead, stored: readonly { id: string }[], writing: boolean): Set<string> {
    const holds = new Set(stored.map((message) => message.id));
    const removed = new Set<string>();
    if (this.wroteSince(read, writing)) return removed;
    for (const [id, at] of this.#seenAt) {
      if (holds.has(id) || at >= read.id) continue;
      removed.add(id);
      this.#seenAt.delete(id);
    }
    return removed;
  }

  /** A list of this client's may reach the server after it served `read`: one is being written (`writing`), or one went out or a request of its ended since the read left. */
  wroteSince(read: TranscriptRead, writing: boolean): boolean {
    return writing || this.#listAt >= read.id;
  }

  /** A clear: nothing the server held before it is held now. */
  forget(): void {
    this.known.clear();
    this.shells.clear();
    this.#seenAt.clear();
  }

  /** This client replaced the transcript: no read that left before is admitted. */
  replacedLocally(): void {
    this.#replacedAt = ++this.#clock;
  }

  read(always: boolean, attempt = 1): TranscriptRead {
    return { id: ++this.#reads, at: this.#clock, attempt, always };
  }

  /**
   * Rule (read admission): an answer is admitted only if the clock did not
   * move while the read was out. One a local replacement or a newer read made
   * obsolete is dropped; one a frame overtook is made again (the server may
   * have answered before it sent that frame, and the answer would put back
   * what the frame removed; chaos: many clients), up to five times: if frames
   * keep coming, they carry the transcript.
   */
  admit(read: TranscriptRead, answered: boolean): Admission {
    if (!answered || read.id !== this.#reads || this.#replacedAt > read.at) return "drop";
    if (this.#clock === read.at) return "admit";
    return read.attempt < MAX_ATTEMPTS ? "retry" : "drop";
  }

  /**
   * Rule (first load admission): the first read only yields to a local
   * replacement; frames that came meanwhile are merged with it (the screen's
   * copies win, see `prependMissing`).
   */
  admitFirst(read: TranscriptRead, answered: boolean): boolean {
    return answered && this.#replacedAt <= read.at;
  }

  /** Exact sync: the server numbers its transcript, so nothing about which answer is newer is inferred. */
  get exact(): boolean {
    return this.version !== null;
  }

  /**
   * Rule (version admission): a whole transcript that carries a version is
   * admitted unless it is older than the base's; the first one turns exact
   * sync on. One without a version is the server's word as before.
   */
  admitVersion(version: number | undefined): boolean {
    if (version === undefined) return true;
    if (this.version !== null && version < this.version) return false;
    this.version = version;
    return true;
  }

  /**
   * Rule (version step): a partial frame (an update, a clear) applies only as
   * the next version. An older one was seen already; one past the next means
   * this socket missed a version, and a snapshot is asked for.
   */
  admitStep(version: number | undefined): "apply" | "stale" | "gap" {
    if (version === undefined) return "apply";
    if (this.version !== null && version <= this.version) return "stale";
    if (this.version !== null && version === this.version + 1) {
      this.version = version;
      return "apply";
    }
    return "gap";
  }

  /** Folds ids the server holds into the base. */
  hold(messages: Iterable<{ id: string; role?: string; parts?: readonly unknown[] }>): void {
    for (const message of messages) this.known.add(message.id);
    this.holdShells(messages);
  }

  /** A read came back, with the server's transcript or (`null`) without (see `delivered`, `settledRead`). */
  readSettled(read: TranscriptRead, stored: Iterable<{ id: string }> | null): void {
    if (stored === null) return;
    this.settledRead = Math.max(this.settledRead, read.id);
    for (const message of stored) this.delivered.add(message.id);
  }

  /** The empty reply shells among a list the server stores (see `shells`). */
  holdShells(messages: Iterable<{ id: string; role?: string; parts?: readonly unknown[] }>): void {
    for (const message of messages) if (message.role === "assistant" && message.parts?.length === 0) this.shells.add(message.id);
  }
}
