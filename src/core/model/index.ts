import type { ChatStatus, UIMessage } from "ai";
import type { SessionSettings } from "../settings";
import { TranscriptBase, type TranscriptRead } from "./base";
import { type Continuation, idle, isRunning } from "./continuation";
import { LocalIntents, type QueuedSend } from "./intents";
import { ObservedTurn } from "./observed";
import { ReplyPlacement, type WorkingList } from "./placement";
import { Turns } from "./turns";
import { ToolBook } from "./tools";

/** The flags an app binds, as the rules derive them. */
export interface Flags {
  serverStreaming?: boolean;
  recovering?: boolean;
  toolContinuation?: boolean;
  cached?: boolean;
}

/** How the server answered the resume handshake this client waits on (see `ChatModel.handshake`). */
export type HandshakeAnswer =
  /** It offers stream `id`: the handshake takes it (ACKed, rendered by the AI SDK). */
  | { kind: "offer"; id: string }
  /** Nothing runs, or no answer came in time. */
  | { kind: "none" }
  /** A turn is pending (#1784): wait longer. */
  | { kind: "pending" }
  /** The probe went out again on a new socket: wait afresh. */
  | { kind: "retry" };

/**
 * What a rule asks the world to do. Rules never call out: they move the model
 * and emit effects, and the session performs them in order, in one place
 * (`ChatSession.#perform`), once the event that caused them is handled.
 */
export type Effect =
  | { kind: "send"; frame: Record<string, unknown> }
  /** Starts a transcript read; its answer comes back through `readAnswered`. */
  | { kind: "read"; read: TranscriptRead }
  /** Exact sync: asks the ordered server for a snapshot (a version was missed). */
  | { kind: "snapshot" }
  /** Publishes derived flags. */
  | { kind: "flags"; flags: Flags }
  /** Runs the effects pass once, after the current task's changes. */
  | { kind: "reconcile" }
  | { kind: "warn"; key: string; message: string }
  /** Runs a user callback, which must not throw into the model. */
  | { kind: "call"; name: string; run: () => void }
  | { kind: "handshake"; answer: HandshakeAnswer }
  /** Lets go of every resume of this chat locally: the waiting handshake, the resumed stream (its server turn runs on). */
  | { kind: "let-go-resumes" };

/**
 * What the rules read of the world, answered by the session shell: the model
 * imports nothing from Vue, sockets or timers, and changes the world only by
 * emitting effects.
 */
export interface View<M extends UIMessage> {
  settings(): SessionSettings<M>;
  /** The AI SDK chat's status (this client's own request). */
  status(): ChatStatus;
  /** The first transcript read is still out. */
  loading(): boolean;
  /** An AI SDK resume (a probe, or a tool continuation) owns the chat's response. */
  resuming(): boolean;
  /** Whether a transcript read can start now (`always`: not only one `resyncOnReconnect` asks for). */
  canRead(always: boolean): boolean;
}

/** Connection edges as the rules need them. */
export interface Link {
  open: boolean;
  everOpened: boolean;
  /** A socket that had opened closed: the next open is a reconnect. */
  sawClose: boolean;
  /** When the socket last opened, on the shell's clock (ms): the start of a probe's grace. */
  openedAt: number;
}

/**
 * How long a queued send waits for the answer to the probe that went out as
 * the socket opened. A server that offers a stream on connect leaves this
 * socket out of every stream until the offer is answered, so a request sent
 * before that loses its reply's first chunks.
 */
export const PROBE_GRACE_MS = 1_000;

/** Resume probes this client owes or sent outside the transport (#1837, #1914). */
export interface Probes {
  /** A reconnect probe goes out once the chat settles. */
  reconnect: boolean;
  /** With `resume` off, one correlated probe asks whether a turn cut by the close still runs. */
  idleNeeded: boolean;
  idleId: string | null;
  /** The server says it is recovering (#1620). */
  recovering: boolean;
  /** An offer this socket left un-ACKed because its probe would be answered with it (the server parks the socket until an ACK). */
  declined: string | null;
  /** A probe this client let go before its answer (a stop, a send after its grace): the answer still says what runs. */
  letGo: string | null;
}

/** Everything the client knows of one conversation; it acts on the world only through the effects it emits. */
export class ChatModel<M extends UIMessage> {
  readonly base = new TranscriptBase();
  readonly intents = new LocalIntents<M>();
  /** Every server request this client knows, one `Turn` each: its whole life (see `turns.ts`). */
  readonly turns = new Turns();
  readonly tools = new ToolBook();
  readonly placement: ReplyPlacement<M>;
  readonly observed: ObservedTurn<M>;
  readonly link: Link = { open: false, everOpened: false, sawClose: false, openedAt: 0 };
  readonly probes: Probes = { reconnect: false, idleNeeded: false, idleId: null, recovering: false, declined: null, letGo: null };
  /** The ids of a cached transcript on screen (`persist`), until the server's transcript replaces it. */
  cached: Set<string> | null = null;
  /** The AI SDK resume's handshake that waits for the server's answer: its probe (one at a time). */
  handshake: { probeId: string; continuation: boolean } | null = null;
  #continuationValue: Continuation = idle;
  /** Effects emitted while an event is handled, performed once it is. */
  readonly #effects: Effect[] = [];
  #depth = 0;
  readonly #perform: (effect: Effect) => void;

  constructor(
    readonly list: WorkingList<M>,
    readonly io: View<M>,
    perform: (effect: Effect) => void,
    newId: () => string
  ) {
    this.#perform = perform;
    this.placement = new ReplyPlacement(list);
    this.observed = new ObservedTurn(list, this.intents, newId);
  }

  /** Asks the world for `effect`: performed once the event being handled is (at once outside one). */
  emit(effect: Effect): void {
    if (this.#depth > 0) this.#effects.push(effect);
    else this.#perform(effect);
  }

  /**
   * Handles one event (`run` applies the rules), then performs the effects
   * they emitted, in order. Events nest: the outermost performs them.
   */
  dispatch<T>(run: () => T): T {
    this.#depth++;
    try {
      return run();
    } finally {
      if (--this.#depth === 0) {
        for (let effect = this.#effects.shift(); effect; effect = this.#effects.shift()) this.#perform(effect);
      }
    }
  }

  /** Starts a transcript read, unless none can start now (see `View.canRead`). */
  read(always: boolean, attempt = 1): boolean {
    if (!this.io.canRead(always)) return false;
    this.emit({ kind: "read", read: this.base.read(always, attempt) });
    return true;
  }

  send(frame: Record<string, unknown>): void {
    this.emit({ kind: "send", frame });
  }

  flags(flags: Flags): void {
    this.emit({ kind: "flags", flags });
  }

  reconcile(): void {
    this.emit({ kind: "reconcile" });
  }

  get continuation(): Continuation {
    return this.#continuationValue;
  }

  /** Moves the continuation; `isToolContinuation` is derived from it. */
  set continuation(next: Continuation) {
    this.#continuationValue = next;
    this.flags({ toolContinuation: isRunning(next) });
  }

  get messages(): M[] {
    return this.list.messages;
  }

  /** Replaces the working transcript (the server told us, or the user did). */
  replace(next: M[]): void {
    this.list.messages = next;
  }

  /** Removes the messages `drop` picks without telling the server; nothing changes when it picks none. */
  remove(drop: (message: M) => boolean): void {
    const kept = this.list.messages.filter((message) => !drop(message));
    if (kept.length !== this.list.messages.length) this.replace(kept);
  }

  /** Whether this client's own request streams or waits (the AI SDK's status). */
  get busy(): boolean {
    const status = this.io.status();
    return status === "submitted" || status === "streaming";
  }

  /**
   * Rule (queued sends): a new message waits while the socket is down, the
   * first transcript read is out, older queued messages go first, a turn
   * this client did not start streams, or a resume owns the chat's response.
   * A request carries the whole transcript: one sent early would make the
   * server drop history, or store a partial copy of the other reply.
   */
  mustQueue(): boolean {
    return this.intents.queued.length > 0 || this.#sendBlocked || this.io.resuming();
  }

  /** No send goes out now: a queued one is going, the socket is down, the first read is out, or a turn this client did not start streams. */
  get #sendBlocked(): boolean {
    return this.intents.sending || !this.link.open || this.io.loading() || this.observed.active;
  }

  /** The queued send that may go out now (each after the previous turn settled), taken off the queue. */
  nextQueued(): QueuedSend<M> | undefined {
    if (this.#sendBlocked || this.busy) return undefined;
    if (this.io.resuming() || isRunning(this.continuation)) return undefined;
    const check = this.intents.queued[0]?.check;
    if (check !== undefined && this.base.settledRead < check) return undefined;
    return this.intents.queued.shift();
  }

  /**
   * Rule (an adopted send waits for a check): sends another page of this
   * conversation stored and never saw end (it died, perhaps mid-request) join
   * the queue ahead of this page's and wait for a read that left after they
   * were adopted: the server's transcript then says whether that page
   * delivered them (`takeDelivered`). A read that fails is made again, and
   * they wait for one that answers (sent twice would break "exactly once");
   * a chat with no reader sends them unchecked. Returns whether any were adopted.
   */
  adopt(messages: readonly M[]): boolean {
    const queued = this.intents.queued;
    const ids = new Set(queued.map((entry) => entry.message.id));
    const fresh = messages.filter((message) => !ids.has(message.id));
    if (fresh.length === 0) return false;
    const check = this.read(true) ? this.base.newestRead : undefined;
    queued.unshift(...fresh.map((message) => ({ message, options: undefined, settle() {}, check })));
    return true;
  }

  /**
   * Rule (a send the server holds goes no more): a queued send whose id the
   * server's transcript holds, or held when any read of this chat answered
   * (`TranscriptBase.delivered`: also an answer a local replacement kept off
   * the screen), was delivered (a persisted send adopted after the page that
   * sent it died mid-request): it leaves the queue unsent.
   * Returns the sends taken off.
   */
  takeDelivered(): Array<QueuedSend<M>> {
    const queued = this.intents.queued;
    if (this.io.loading()) return [];
    const delivered = queued.filter((entry) => this.base.known.has(entry.message.id) || this.base.delivered.has(entry.message.id));
    if (delivered.length > 0) queued.splice(0, queued.length, ...queued.filter((entry) => !delivered.includes(entry)));
    return delivered;
  }

  /**
   * Rule (a probe's grace): a queued send waits up to PROBE_GRACE_MS after the socket opened for
   * the probe's answer, which comes after any offer the server made on connect (ms left; 0 when over).
   */
  probeGraceLeft(now: number): number {
    return Math.max(0, this.link.openedAt + PROBE_GRACE_MS - now);
  }

  /**
   * Rule (an unanswered probe does not hold a send, issue 21, 4): a queued
   * send that waits only for a resume probe nobody answered (not a
   * continuation's) ends that probe as "nothing to resume" once its grace is
   * over; an offer that comes later is still followed, as an observed turn.
   */
  probeHoldsQueue(): boolean {
    if (this.intents.queued.length === 0 || this.#sendBlocked) return false;
    return this.io.resuming() && !isRunning(this.continuation) && this.handshake !== null;
  }

  /** Ends the observed turn. `hold`: the turn may still run unseen (a close), so client tools wait for it. */
  dropObserved(hold = true): void {
    if (hold && this.observed.streamId !== null) this.turns.heldTurn = this.observed.streamId;
    // Rule (no empty replies): a reply it left without a part goes once the chat settles; a frame brings it back if the turn stored one.
    const shell = this.observed.message?.id;
    if (shell !== undefined) this.turns.endedReplies.add(shell);
    this.observed.end();
    this.flags({ serverStreaming: false });
    if (hold && this.continuation.kind === "observed") this.continuation = idle;
    // Rule (the base wins when an observed turn ends): not at a close, the turn may run on unseen.
    if (!hold) this.dropUnstored(new Set([shell]));
  }

  /**
   * Exact sync: the messages of `ids` the stored transcript at the version
   * held lacks leave the screen. Rule (the base wins when an observed turn
   * ends, exact sync): the overlay kept its message over the frames that came
   * while the turn ran; once the turn is over (its end, or the server says
   * nothing runs), the agent has written what it keeps of it (it sends a
   * turn's end after the write), so the message goes if it lacks it: one the
   * agent never stored, or one built under an id of this client's because its
   * `start` never came here. Also rule (a cut reply stays only if stored).
   */
  dropUnstored(ids: { has(id: string): boolean }): void {
    const stored = this.base.messages;
    if (this.base.exact) this.remove((message) => ids.has(message.id) && !stored.some((held) => held.id === message.id));
  }
}
