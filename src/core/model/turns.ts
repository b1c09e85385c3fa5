import type { ResponseFrame } from "../frames";
import type { ChatTurnEndEvent } from "../protocol";

/**
 * A chat turn's life as this client sees it, in one place. Every server
 * request (a turn) has one `Turn`, by request id, moved only by the named
 * transitions below; nothing else (the AI SDK chat, the transport) keeps a
 * second copy of what it says.
 *
 * ```
 * this client's request ──► chat (request) ──► its done ─────────────► ended
 *                             │   stop()  ──► stopped ──► its done ──► ended, read back
 *                             │   close   ──► cut ──► probe finds it ──► chat (resume)
 *                             │                  └──► probe finds nothing ─► read back
 * an offer ──► ACKed by a resume ──► chat (resume | continuation), replaying from chunk 0
 *          └─► ACKed by this client itself ──► the observer renders it
 * another client's live frames ──► the observer renders it
 * ```
 */

/** Who renders a turn's chunks here. */
export type Follow =
  /** The AI SDK, through the transport: this client's request, or a running turn a resume of its attached to. */
  | { kind: "chat"; via: "request" | "resume" | "continuation" }
  /**
   * This client stopped it (or cancelled it as the AI SDK let go): it is followed no further, its frames only
   * keep the books until its end, and that end reads back. `own`: one the AI SDK followed as this client's.
   */
  | { kind: "stopped"; own: boolean }
  /** Not through the transport: another client's turn (the observer renders it), or one the AI SDK let go of. */
  | { kind: "none" };

/** What this client ACKed of a turn on this socket. */
export type Replay =
  /** Nothing ACKed on this socket. */
  | { kind: "none" }
  /** This client ACKed the offer itself: its own request offered to a parked socket, an observed offer, a declined one. */
  | { kind: "self" }
  /**
   * A resume of its ACKed it (the transport): the replay restarts from chunk 0. `due`: no replayed frame came
   * yet; `early`: live chunks that came first, held (rule: live chunk before its replay).
   */
  | { kind: "resumed"; due: boolean; early: ResponseFrame[] | null };

/** One server request as this client knows it. */
export interface Turn {
  follow: Follow;
  /** A socket close cut it off while this client followed it as its own: the reconnect decides how it ended. */
  cut: boolean;
  replay: Replay;
  /** An offer of it was taken: the replay rebuilds the reply from chunk 0, until it completes. */
  rebuilds: boolean;
  /** No replayed chunk came since an ACK of this client's: what ran while it could not watch is only stored. */
  unreplayed: boolean;
  /** The highest `seq` its resumed stream delivered since the ACK (null: none): a replay's repeats go. */
  delivered: number | null;
  /**
   * Rule (applied continuation chunks, #1951): the highest continuation chunk (`seq`) applied here, by the AI
   * SDK's stream or the observer (null: none). A continuation extends a reply this client may have rendered
   * live, and a replay after a reconnect sends its whole buffer again: what it applied already is dropped.
   */
  applied: number | null;
  /** Text parts its continuation stream opened here (rule: recovered text part). */
  opened: Set<string> | null;
  /** The reply the AI SDK streams it into here: named by its `start`, or appended without one (`unnamed`: the server stores it under an id of its own). */
  reply: { id: string; unnamed: boolean } | null;
  /** The message a replayed `start` this client skipped named (rule: a stream keeps its name). */
  named: string | null;
  /** The message the observer last merged it on screen as (a clear it interrupts leaves that one). */
  shown: string | null;
  /** A clear of this client's interrupted it. */
  clear: boolean;
  /** The base clock when this client's request went out (-1: another of its requests was open); null for others. */
  wentOutAt: number | null;
  /** A later regenerate or edit of this client's replaced it. */
  superseded: boolean;
  /** The error text of an error frame before its `done`. */
  error: string | null;
  /** `onTurnEnd` was reported for it. */
  reported: boolean;
}

/** How much a turn's end asks to read back: nothing, a read when `resyncOnReconnect` is on, or a read in any case. */
export type ReadBack = "none" | "resync" | "always";

/** How many entries a remembered set or map keeps (turns, claimed tool calls, reseeded replies). */
const MAX_RECORDS = 500;

/** Forgets the oldest entry of a remembered set or map past `MAX_RECORDS`. */
export function forgetOldest(entries: Set<string> | Map<string, unknown>): void {
  if (entries.size > MAX_RECORDS) entries.delete(entries.keys().next().value as string);
}

/** Live chunks held for a replay that never comes are let go at this many. */
const MAX_EARLY = 32;

const fresh = (): Turn => ({
  follow: { kind: "none" },
  cut: false,
  replay: { kind: "none" },
  rebuilds: false,
  unreplayed: false,
  delivered: null,
  applied: null,
  opened: null,
  reply: null,
  named: null,
  shown: null,
  clear: false,
  wentOutAt: null,
  superseded: false,
  error: null,
  reported: false
});

/** Whether a frame shows its turn running on the server now: a live chunk or its end, neither replayed nor skipped. */
export const runsLive = (frame: ResponseFrame): boolean =>
  !frame.replay && frame.outcome !== "skipped" && (frame.done || frame.error || frame.body.trim() !== "");

/**
 * Every turn this client knows, and the rules that move them. Message ids
 * kept here are the replies a turn's end left to settle.
 */
export class Turns {
  readonly #turns = new Map<string, Turn>();
  /** The server turn this client last attached to or watches whose end has not come: what `stop()` cancels. */
  active: string | null = null;
  /** The error the chat reported while the socket was down: the close's, not the server's (rule: a cut is not a failure). */
  cutError: Error | undefined;
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

  get(id: string): Turn | undefined {
    return this.#turns.get(id);
  }

  /** The turn `id`, known from now on; the oldest are forgotten past 500. */
  at(id: string): Turn {
    let turn = this.#turns.get(id);
    if (!turn) {
      this.#turns.set(id, (turn = fresh()));
      forgetOldest(this.#turns);
    }
    return turn;
  }

  /** Whether this client follows `id` as its own: the AI SDK renders it, or it stopped it and waits for its end. */
  isLocal(id: string): boolean {
    const follow = this.#turns.get(id)?.follow;
    return follow?.kind === "chat" || (follow?.kind === "stopped" && follow.own);
  }

  /** The turns this client follows as its own (see `isLocal`). */
  get local(): string[] {
    return [...this.#turns.keys()].filter((id) => this.isLocal(id));
  }

  /** Whether any turn is this client's own (see `isLocal`). */
  get anyLocal(): boolean {
    for (const id of this.#turns.keys()) if (this.isLocal(id)) return true;
    return false;
  }

  /** Rule (own request's frames): the AI SDK renders `id` from now on (a request of this client's, or an offer its resume took). */
  followed(id: string, via: "request" | "resume" | "continuation"): void {
    this.at(id).follow = { kind: "chat", via };
    if (via !== "continuation") this.active = id;
  }

  /**
   * The transport let go of `id`'s stream: at its end, or for good (`cancelled`: the server turn was cancelled
   * too, so its frames keep the books until its end comes).
   */
  released(id: string, cancelled: boolean): void {
    const turn = this.#turns.get(id);
    if (turn?.follow.kind === "chat") turn.follow = cancelled ? { kind: "stopped", own: true } : { kind: "none" };
  }

  /** This client's own turn `id` ended here (its `done`, or its error): it is not followed as its own any more; a stop's read-back stays owed. */
  ownEnded(id: string): void {
    const turn = this.#turns.get(id);
    if (turn?.follow.kind === "chat") turn.follow = { kind: "none" };
    else if (turn?.follow.kind === "stopped") turn.follow = { kind: "stopped", own: false };
    if (this.active === id) this.active = null;
  }

  /** Rule (a stopped turn is followed no further, issue 22, 3): this client stops `ids`; their ends read back. */
  stopping(ids: Iterable<string>): void {
    for (const id of ids) {
      const turn = this.at(id);
      if (turn.follow.kind !== "stopped") turn.follow = { kind: "stopped", own: this.isLocal(id) };
    }
  }

  /** A request of this client's that runs: the AI SDK renders it (sent, neither ended nor stopped). */
  isRunning(id: string): boolean {
    return this.#turns.get(id)?.follow.kind === "chat";
  }

  /**
   * Rule (ACKs are per socket) and rule (a close holds the cut turn): a socket that had opened closed. Offers
   * this client ACKed itself were for that socket; the turns it followed as its own lose their ends.
   */
  socketClosed(): void {
    for (const [id, turn] of this.#turns) {
      if (turn.replay.kind === "self") turn.replay = { kind: "none" };
      if (this.isLocal(id)) turn.cut = true;
    }
  }

  /** Whether `error` only says a close cut a request off (rule: a cut is not a failure). */
  isCut(error: Error | undefined): boolean {
    return error !== undefined && error === this.cutError;
  }

  /**
   * Rule (a cut turn found idle is read back): a probe of this client's found nothing running, so the turns a
   * close cut off ended unseen. Returns whether there were any: their stored copies are read again, since the
   * read the reopened socket sent can be answered before a restarted server stored the partial reply it had
   * (chaos: server restart, where the screen kept words the server never stored).
   */
  foundIdle(): boolean {
    let any = false;
    for (const turn of this.#turns.values()) {
      any ||= turn.cut;
      turn.cut = false;
    }
    return any;
  }

  /**
   * A response frame was handled (`followed`: the AI SDK rendered it when it came; a stopped turn is followed
   * no further, so its end settles the cut, not its first chunk). Returns true
   * when it completed a cut turn that nothing follows (one that is followed ends the AI SDK's request itself):
   * the chat is then ready, whatever a stream in between ended with (a resumed older turn that failed
   * meanwhile). A newer request of this client's cannot have ended before it: the server runs turns in order.
   */
  cutTurnEnded(frame: ResponseFrame, followed: boolean): boolean {
    const turn = this.#turns.get(frame.id);
    if (!turn?.cut || (!followed && !frame.done)) return false;
    turn.cut = false;
    return !followed && !frame.error && (frame.outcome === undefined || frame.outcome === "completed");
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

  /** A resume of this client's ACKed `id`: its replay starts from chunk 0 again. */
  resumeAcked(id: string): void {
    const turn = this.at(id);
    turn.delivered = -1;
    turn.replay = { kind: "resumed", due: true, early: null };
    turn.opened = null;
    turn.unreplayed = true;
  }

  /** This client ACKs an offer of `id` itself. */
  selfAcked(id: string): void {
    const turn = this.at(id);
    turn.replay = { kind: "self" };
    turn.unreplayed = true;
  }

  /** Rule (the observer's books close): an unwatched turn's end: nothing of it is ACKed here any more. */
  unwatchedEnded(id: string): void {
    const turn = this.at(id);
    if (turn.replay.kind === "self") turn.replay = { kind: "none" };
  }

  /**
   * Rule (an ACK the server ignored): the transport ACKed `id` and nothing of it has come since: no
   * replayed frame, no held live chunk. The server replays only the stream it runs, so once it offers
   * another request, this one will never stream on this socket. Its books close as at a cut.
   */
  letGoUnanswered(id: string): boolean {
    const turn = this.#turns.get(id);
    if (turn?.replay.kind !== "resumed" || !turn.replay.due || turn.replay.early?.length) return false;
    turn.replay = { kind: "none" };
    turn.delivered = turn.opened = null;
    turn.rebuilds = false;
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
   * to handle now, in order; a repeated replay chunk (rule: repeated replay) is none.
   */
  admit(frame: ResponseFrame): ResponseFrame[] {
    const turn = this.#turns.get(frame.id);
    const now = () => (this.isRepeatedReplay(frame) ? [] : [frame]);
    if (turn?.replay.kind !== "resumed" || frame.continuation) return now();
    const replay = turn.replay;
    const early = replay.early;
    const live = !frame.replay && !frame.done && !frame.error && frame.seq !== undefined;
    if (!live) replay.due = false;
    if (live && (replay.due || early) && (early?.length ?? 0) < MAX_EARLY) {
      (replay.early ??= []).push(frame);
      return [];
    }
    if (!early || (frame.replay && !frame.replayComplete)) return now();
    replay.early = null;
    const missed = early.filter((held) => (held.seq ?? -1) > (turn.delivered ?? -1));
    for (const held of missed) turn.delivered = Math.max(turn.delivered ?? -1, held.seq ?? -1);
    return frame.replayComplete ? [...now(), ...missed] : [...missed, ...now()];
  }

  /**
   * Rule (repeated replay, #1733): a stream a resume attached to replays its
   * buffer once per ACK; chunks it already delivered are dropped by `seq`.
   * Continuation replays are left to `applied` (#1951).
   */
  isRepeatedReplay(frame: ResponseFrame): boolean {
    const turn = this.#turns.get(frame.id);
    const highest = turn?.delivered;
    if (!turn || highest === null || highest === undefined || frame.continuation) return false;
    if (frame.done || frame.error) {
      turn.delivered = null;
      return false;
    }
    if (frame.seq === undefined) return false;
    if (frame.replay && frame.seq <= highest) return true;
    turn.delivered = Math.max(highest, frame.seq);
    return false;
  }

  /** Rule (applied continuation chunks): a chunk of `id` with `seq` was applied here. */
  recordApplied(id: string, seq: number | undefined): void {
    const turn = this.at(id);
    if (seq !== undefined) turn.applied = Math.max(seq, turn.applied ?? -1);
  }

  /** Rule (applied continuation chunks): whether `frame` replays a continuation chunk applied here already. */
  isAppliedReplay(frame: ResponseFrame): boolean {
    const applied = this.#turns.get(frame.id)?.applied;
    return frame.replay && frame.continuation && frame.seq !== undefined && applied != null && frame.seq <= applied;
  }

  /** A replayed chunk of `id` came: what ran while this client could not watch is on screen. */
  replayed(id: string): void {
    this.at(id).unreplayed = false;
  }

  /**
   * Rule (recovered text part): the text parts a continuation's stream opened since its resume's ACK. Returns
   * false the first time `partId` is seen through a delta: its `text-start` was dropped.
   */
  opensText(id: string, partId: string, start: boolean): boolean {
    const opened = (this.at(id).opened ??= new Set());
    if (opened.has(partId)) return true;
    opened.add(partId);
    return start;
  }

  /**
   * Turns whose end has not come here that this client stopped, or whose
   * reply it showed: the server may still run them (the transport forgets a
   * stopped request; a send or a socket drop ends a watched turn's overlay).
   */
  openTurns(): string[] {
    return [...this.#turns].filter(([, turn]) => turn.follow.kind === "stopped" || turn.reply !== null || turn.shown !== null).map(([id]) => id);
  }

  /**
   * Rule (a superseded request's failure is not the chat's): a regenerate's or an edit's request went out
   * while others of this client's were open; it replaces them. The AI SDK follows only the newest, but still
   * reports an older one's failure as the chat's `error` (after a stop of the newer one, or after it
   * completed); so an older one's error frame reaches its stream as a plain end. `onTurnEnd` still names
   * the error. A plain send replaces nothing: the failure of the request before it still shows.
   */
  supersede(newest: string): void {
    for (const id of this.local) if (id !== newest) this.at(id).superseded = true;
  }

  /** Whether a later rewrite replaced `id` (see `supersede`). */
  isSuperseded(id: string): boolean {
    return this.#turns.get(id)?.superseded === true;
  }

  /**
   * Rule (end of stream): what a turn's end reads back. The server stores what
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
    const turn = this.#turns.get(frame.id);
    if (!turn) return "none";
    const clear = this.cutByClear(frame);
    const unnamed = turn.reply?.unnamed === true && !frame.error;
    if (unnamed) this.unnamedReplies.add(turn.reply!.id);
    const raced = turn.wentOutAt !== null && turn.wentOutAt !== clock;
    const resync = turn.unreplayed || turn.follow.kind === "stopped" || unnamed || raced;
    if (frame.done) turn.clear = false;
    if (turn.follow.kind === "stopped" && !turn.follow.own) turn.follow = { kind: "none" };
    if (turn.replay.kind === "self") turn.replay = { kind: "none" };
    turn.unreplayed = turn.superseded = turn.rebuilds = false;
    turn.wentOutAt = turn.reply = turn.opened = turn.shown = null;
    return clear ? "always" : resync ? "resync" : "none";
  }

  /** A clear interrupted the turn this frame ends, and the server aborted it (or names no outcome): it may store the partial reply after the clear. */
  cutByClear(frame: ResponseFrame): boolean {
    return this.#turns.get(frame.id)?.clear === true && frame.done && (frame.outcome === "aborted" || frame.outcome === undefined);
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
    const turn = this.at(frame.id);
    if (frame.error && !frame.done) {
      turn.error = frame.body;
      return undefined;
    }
    const earlierError = turn.error;
    turn.error = null;
    const outcome = frame.error ? "error" : (frame.outcome ?? (earlierError !== null ? "error" : "completed"));
    if (outcome === "recovering" || turn.reported) return undefined;
    turn.reported = true;
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

  /**
   * Rule (reset on clear): a reset forgets what each turn did for the old transcript. Who follows a turn, where
   * its resumed stream's replay stands, its reported end and whether a later request superseded it stay, and
   * so does what the clear that reset it `interrupted` may still store.
   */
  reset(interrupted: Iterable<string | null> = []): void {
    const kept = new Set(interrupted);
    for (const [id, turn] of this.#turns) {
      const { follow, delivered, reported, superseded, cut, reply, shown } = turn;
      Object.assign(turn, fresh(), { follow, delivered, reported, superseded, cut });
      // Rule (a clear's interrupted turns): each may store its partial reply after the clear emptied the transcript,
      // under the id it streamed into here (the AI SDK streams on into it) or was shown as (seed 2078348348: a
      // second clear before its end still finds it); its end reads back.
      if (kept.has(id)) Object.assign(turn, { clear: true, reply: reply && { id: reply.id, unnamed: false }, shown });
    }
    for (const id of kept) if (id !== null && !this.#turns.has(id)) this.at(id).clear = true;
    this.endedReplies.clear();
    this.unnamedReplies.clear();
    this.rebuilt.clear();
    this.unsequenced.clear();
    this.cutReplies.clear();
    this.deferredEnds = [];
    this.heldTurn = this.recoveringTurn = null;
  }
}
