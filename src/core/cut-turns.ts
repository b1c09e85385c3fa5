import type { ResponseFrame } from "./frames";

/**
 * Rule (a cut is not a failure): the error the transport gives a request a socket close cut off says only
 * that its end went unseen. The reconnect decides how the turn ended: a resume, the stored transcript, or
 * the turn's own end on the reopened socket. This is what the session knows about such cuts.
 */
export class CutTurns {
  /** The error the chat reported while the socket was down: the close's, not the server's. */
  #error: Error | undefined;
  /** This client's turns a close cut off, until their end comes. */
  readonly #turns = new Set<string>();

  /** The chat reported `error`; with the socket down it is the close's. */
  errored(error: Error, linkOpen: boolean): void {
    if (!linkOpen) this.#error = error;
  }

  /** A socket that had opened closed: the turns this client follows as its own lose their ends. */
  closed(local: Iterable<string>): void {
    for (const id of local) this.#turns.add(id);
  }

  /** Whether `error` only says a close cut its request off. */
  isCut(error: Error | undefined): boolean {
    return error !== undefined && error === this.#error;
  }

  /** The close's error was cleared. */
  forget(): void {
    this.#error = undefined;
  }

  /**
   * Rule (a cut turn found idle is read back): a probe of this client's found nothing running, so the turns
   * the close cut off ended unseen. Returns whether there were any: their stored copies are read again,
   * since the read the reopened socket sent can be answered before a restarted server stored the partial
   * reply it had (chaos: server restart, where the screen kept words the server never stored).
   */
  foundIdle(): boolean {
    const any = this.#turns.size > 0;
    this.#turns.clear();
    return any;
  }

  /**
   * A response frame was handled. Returns true when it completed a cut turn that no transport stream
   * follows (one that does ends the AI SDK's request itself): the chat is then ready, whatever a stream
   * in between ended with (a resumed older turn that failed meanwhile). A newer request of this client's
   * cannot have ended before it: the server runs turns in order.
   */
  ended(frame: ResponseFrame, followed: boolean): boolean {
    if (followed) {
      this.#turns.delete(frame.id);
      return false;
    }
    if (!frame.done || !this.#turns.delete(frame.id)) return false;
    return !frame.error && (frame.outcome === undefined || frame.outcome === "completed");
  }
}
