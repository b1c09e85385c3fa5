import type { ResponseFrame } from "../frames";
import type { ChatTurnEndEvent } from "../protocol";

/** What this client knows of one server request (a chat turn), by request id. */
export interface StreamRecord {
  /** The reply a local request streams into, once its `start` named it. */
  replyId?: string;
  /** This client ACKed the server's offer itself (not through the transport). */
  acked?: boolean;
  /** ACKed, and no replayed chunk has arrived since. */
  unreplayed?: boolean;
  /** Highest `seq` the transport's stream delivered since this client's ACK. */
  seq?: number;
  /** The transport ACKed and no replayed frame has come since (rule: live chunk before its replay). */
  replayDue?: boolean;
  /** Live chunks that came after the transport's ACK and before its replay completed, each with its raw data. */
  early?: Array<Admitted<unknown>>;
  /** Text parts this continuation stream opened since its ACK. */
  openedText?: Set<string>;
  /** The offer was taken: its replay rebuilds the reply from chunk 0. */
  replayPending?: boolean;
  /** This client stopped the turn (its request, a continuation it cancelled): it is followed no further, and its end reads back. */
  stopped?: boolean;
  /** The local reply streamed without a `start` naming it (a plain-text `Response`): the server stores it under an id of its own. */
  unnamed?: boolean;
  /** The message id a `start` of this stream named, also a replayed one this client skipped (rule: a stream keeps its name). */
  named?: string;
  /** The message an observed stream's reply was last merged on screen as: a clear it interrupts leaves that one (the server stores it after the clear). */
  shown?: string;
  /** A clear of this client's interrupted the turn. */
  interruptedByClear?: boolean;
  /** The error text of an error frame that came before `done`. */
  error?: string;
  /** `onTurnEnd` was reported (never twice, also across resets). */
  ended?: boolean;
  /** A regenerate or an edit of this client's went out while this request was open, replacing it. */
  superseded?: boolean;
  /** The base clock when this request of this client's went out, or -1: another of its requests was open (see `wentOut`). */
  wentOutAt?: number;
}

/** A response frame to handle now, with the socket data it came in. */
export interface Admitted<T> {
  frame: ResponseFrame;
  raw: T;
}

/** Live chunks held for a replay that never comes are let go at this many. */
const MAX_EARLY = 32;

/** Whether a frame shows its turn running on the server now: a live chunk or its end, neither replayed nor skipped. */
export const runsLive = (frame: ResponseFrame): boolean =>
  !frame.replay && frame.outcome !== "skipped" && (frame.done || frame.error || frame.body.trim() !== "");

/** How much a stream end asks to read back: nothing, a read when `resyncOnReconnect` is on, or a read in any case. */
export type ReadBack = "none" | "resync" | "always";

/** How many entries a remembered set or map keeps (stream records, claimed tool calls, reseeded replies). */
const MAX_RECORDS = 500;

/** Forgets the oldest entry of a remembered set or map past `MAX_RECORDS`. */
export function forgetOldest(entries: Set<string> | Map<string, unknown>): void {
  if (entries.size > MAX_RECORDS) entries.delete(entries.keys().next().value as string);
}

/**
 * The stream records, and the rules that read them when a stream ends.
 * Message ids kept here are the replies a stream end left to settle.
 */
export class StreamRecords {
  readonly #records = new Map<string, StreamRecord>();
  /** Replies whose turn ended: one still without parts once the chat settles is removed (`AIChatAgent` stores none). */
  endedReplies = new Set<string>();
  /** Replies a replay rebuilt over their shell: repeated text collapses until the chat settles (#1733). */
  readonly rebuilt = new Set<string>();
  /** Ended local replies that streamed without an id: the next read's stored copy replaces each (issue 22, 1). */
  readonly unnamedReplies = new Set<string>();
  /** Replies a continuation replays without `seq` (servers before 0.12.2): collapsed until their stream finishes (#1951). */
  readonly unsequenced = new Set<string>();
  /** Turn ends of this client's own requests, reported once the AI SDK settled them. */
  deferredEnds: ChatTurnEndEvent[] = [];
  /**
   * Rule (a cut reply stays only if stored): replies of turns a clear cut that
   * ended (see `cutByClear`), each with the newest read when its turn ended.
   * The server stores such a reply after it emptied the transcript, or does
   * not (it let the turn run on and dropped what it made: chaos seed
   * 835076279), while this screen kept it, rebuilt from the chunks after the
   * clear. The first admitted read made after the end says which
   * (`unstoredCutReplies`); an ordered server's base does at once
   * (`settleEndedReplies`). One it lacks goes.
   */
  readonly cutReplies = new Map<string, number>();
  /** A server turn known to run that this socket cannot see (withheld, or cut by a close) (#2195). */
  heldTurn: string | null = null;
  /** The turn the server is recovering (#1620). */
  recoveringTurn: string | null = null;

  get(id: string): StreamRecord | undefined {
    return this.#records.get(id);
  }

  /** The record of `id`, created on first use; the oldest records are forgotten past 500. */
  at(id: string): StreamRecord {
    let record = this.#records.get(id);
    if (!record) {
      this.#records.set(id, (record = {}));
      forgetOldest(this.#records);
    }
    return record;
  }

  /** Rule (ACKs are per socket): the socket closed; offers this client ACKed itself were for that socket. */
  socketClosed(): void {
    for (const record of this.#records.values()) record.acked = false;
  }

  /**
   * Rule (a raced request reads back): this client's request `id` went out
   * at base clock `clock`. `AIChatAgent` writes a request's list over what
   * it stores, and sends the sender no broadcast of its own turn. So when a
   * transcript frame came while the request was out (another client wrote
   * first: its rewrite's list, or this list, deleted or overwrote something),
   * or another of this client's requests was open as it went out (the list
   * carried that reply only as far as it had come), the end reads back.
   */
  wentOut(id: string, clock: number, overlapping: boolean): void {
    this.at(id).wentOutAt = overlapping ? -1 : clock;
  }

  /** The transport ACKed `id`: its replay starts from chunk 0 again. */
  transportAcked(id: string): void {
    const record = this.at(id);
    record.seq = -1;
    record.replayDue = true;
    record.early = record.openedText = undefined;
    record.unreplayed = true;
  }

  /**
   * Rule (an ACK the server ignored): the transport ACKed `id` and nothing of it has come since: no
   * replayed frame, no held live chunk. The server replays only the stream it runs, so once it offers
   * another request, this one will never stream on this socket. Its books close as at a cut.
   */
  letGoUnanswered(id: string): boolean {
    const record = this.#records.get(id);
    if (!record?.replayDue || record.early?.length) return false;
    record.replayDue = record.seq = record.openedText = record.replayPending = undefined;
    return true;
  }

  /**
   * Rule (live chunk before its replay): the server unparks a socket on the
   * transport's ACK before it sends the replay, so a live chunk can come
   * first; the replay restarts from chunk 0 and carries it again (chaos:
   * socket drops, two drops one chunk apart). Delivered first, it would reach
   * the AI SDK before the `start` and `text-start` the replay brings. It is
   * held until the replay completes (or the stream goes on or ends without
   * one), then goes only if the replay did not carry it. Returns the frames
   * to handle now, in order, with their raw data; a repeated replay chunk
   * (rule: repeated replay) is none.
   */
  admit<T>(frame: ResponseFrame, raw: T): Array<Admitted<T>> {
    const record = this.#records.get(frame.id);
    const now = () => (this.isRepeatedReplay(frame) ? [] : [{ frame, raw }]);
    if (!record || frame.continuation) return now();
    const early = record.early as Array<Admitted<T>> | undefined;
    const live = !frame.replay && !frame.done && !frame.error && frame.seq !== undefined;
    if (!live) record.replayDue = undefined;
    if (live && (record.replayDue || early) && (early?.length ?? 0) < MAX_EARLY) {
      (record.early ??= []).push({ frame, raw });
      return [];
    }
    if (!early || (frame.replay && !frame.replayComplete)) return now();
    record.early = undefined;
    const highest = record.seq ?? -1;
    const missed = early.filter((held) => (held.frame.seq ?? -1) > highest);
    for (const held of missed) record.seq = Math.max(record.seq ?? -1, held.frame.seq ?? -1);
    return frame.replayComplete ? [...now(), ...missed] : [...missed, ...now()];
  }

  /**
   * Rule (repeated replay, #1733): a stream the transport attached to replays
   * its buffer once per ACK; chunks it already delivered are dropped by `seq`.
   * Continuation replays are left to the transport's own ledger (#1951).
   */
  isRepeatedReplay(frame: ResponseFrame): boolean {
    const record = this.#records.get(frame.id);
    const highest = record?.seq;
    if (!record || highest === undefined || frame.continuation) return false;
    if (frame.done || frame.error) {
      record.seq = undefined;
      return false;
    }
    if (frame.seq === undefined) return false;
    if (frame.replay && frame.seq <= highest) return true;
    record.seq = Math.max(highest, frame.seq);
    return false;
  }

  /** Marks the turns this client stops. */
  stopping(ids: Iterable<string>): void {
    for (const id of ids) this.at(id).stopped = true;
  }

  /**
   * Turns whose end has not come here that this client stopped, or whose
   * reply it showed: the server may still run them (the transport forgets a
   * stopped request; a send or a socket drop ends a watched turn's overlay).
   */
  openTurns(): string[] {
    return [...this.#records].filter(([, record]) => record.stopped || record.replyId !== undefined || record.shown !== undefined).map(([id]) => id);
  }

  /**
   * Rule (a superseded request's failure is not the chat's): a regenerate's or an edit's request went out
   * while others of this client's were open; it replaces them. The AI SDK follows only the newest, but still
   * reports an older one's failure as the chat's `error` (after a stop of the newer one, or after it
   * completed); so an older one's error frame reaches its stream as a plain end. `onTurnEnd` still names
   * the error. A plain send replaces nothing: the failure of the request before it still shows.
   */
  supersede(open: Iterable<string>, newest: string): void {
    for (const id of open) if (id !== newest) this.at(id).superseded = true;
  }

  /**
   * Rule (end of stream): what a stream end reads back. The server stores what
   * this client may not have seen in these cases:
   * - a clear of this client's interrupted the turn, and the server aborted it
   *   (or names no outcome): it stores the partial reply after the clear;
   * - the stream had closed when the server took this client's ACK: the replay
   *   carried nothing, so what streamed while the socket was down is only stored (chaos: socket drops);
   * - this client stopped it: the server kept what it generated until it took
   *   the cancel, which this client dropped, and the sender gets no broadcast
   *   of its own turn (issue 21, 2: the screen stayed a chunk short);
   * - its reply streamed without an id: the server stored it under its own (issue 22, 1);
   * - it raced another write (`wentOut`): its list may have overwritten it.
   */
  readBackAtEnd(frame: ResponseFrame, clock: number): ReadBack {
    const record = this.#records.get(frame.id);
    if (!record) return "none";
    const clear = this.cutByClear(frame);
    const unnamed = record.unnamed && !frame.error;
    if (unnamed && record.replyId !== undefined) this.unnamedReplies.add(record.replyId);
    const raced = record.wentOutAt !== undefined && record.wentOutAt !== clock;
    const resync = record.unreplayed || record.stopped || unnamed || raced;
    if (frame.done) record.interruptedByClear = undefined;
    record.unreplayed = record.stopped = record.unnamed = record.acked = record.replayPending = record.superseded = record.wentOutAt = undefined;
    record.replyId = record.openedText = record.shown = undefined;
    return clear ? "always" : resync ? "resync" : "none";
  }

  /** A clear interrupted the turn this frame ends, and the server aborted it (or names no outcome): it may store the partial reply after the clear. */
  cutByClear(frame: ResponseFrame): boolean {
    const record = this.#records.get(frame.id);
    return record?.interruptedByClear === true && frame.done && (frame.outcome === "aborted" || frame.outcome === undefined);
  }

  /**
   * Rule (a cut reply stays only if stored): an admitted read `readId`
   * answered `stored`; the replies cut by a clear that ended before it left
   * are settled, and those it lacks are returned, to leave the screen.
   */
  unstoredCutReplies(readId: number, stored: readonly { id: string }[]): Set<string> {
    const gone = new Set<string>();
    for (const [reply, before] of this.cutReplies) {
      if (readId <= before) continue;
      this.cutReplies.delete(reply);
      if (!stored.some((message) => message.id === reply)) gone.add(reply);
    }
    return gone;
  }

  /**
   * Rule (turn end, once): a `done` reports `onTurnEnd` once per request; an
   * error frame before it names the error. `recovering` is not an end: the
   * turn goes on under a new request.
   */
  turnEnd(frame: ResponseFrame): ChatTurnEndEvent | undefined {
    if (!frame.error && !frame.done) return undefined;
    const record = this.at(frame.id);
    if (frame.error && !frame.done) {
      record.error = frame.body;
      return undefined;
    }
    const earlierError = record.error;
    record.error = undefined;
    const outcome = frame.error ? "error" : (frame.outcome ?? (earlierError !== undefined ? "error" : "completed"));
    if (outcome === "recovering" || record.ended) return undefined;
    record.ended = true;
    const error = frame.error ? frame.body : earlierError;
    return {
      requestId: frame.id,
      ...(frame.messageIds ? { messageIds: frame.messageIds } : {}),
      outcome,
      ...(outcome === "error" && error ? { error } : {}),
      replay: frame.replay
    };
  }

  /**
   * Rule (held and recovering turns, #2195 #1620): server turns run one at a
   * time, so a frame of another request ends what was held or recovering.
   */
  noteResponse(frame: ResponseFrame): void {
    // The held turn's own done may have gone with a closed socket: another request's turn ending or streaming live ends it too.
    if (this.heldTurn === frame.id ? frame.done || frame.error : runsLive(frame)) this.heldTurn = null;
    if (frame.done && frame.outcome === "recovering") this.recoveringTurn = frame.id;
    else if (this.recoveringTurn !== frame.id && !frame.replay && frame.outcome !== "skipped") this.recoveringTurn = null;
  }

  /** Whether a turn this client cannot watch yet may still run (client tools wait for it). */
  get holdsTools(): boolean {
    return this.heldTurn !== null || this.recoveringTurn !== null;
  }

  /** A reset forgets what each stream did for the old transcript; reported ends, replay positions and which requests a later one superseded stay. */
  reset(): void {
    for (const [id, { ended, seq, superseded }] of this.#records) this.#records.set(id, { ended, seq, superseded });
    this.endedReplies.clear();
    this.unnamedReplies.clear();
    this.rebuilt.clear();
    this.unsequenced.clear();
    this.cutReplies.clear();
    this.deferredEnds = [];
  }
}
