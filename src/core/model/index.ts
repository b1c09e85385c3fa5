import type { ChatStatus, UIMessage } from "ai";
import type { WebSocketChatTransport } from "agents/chat/transport";
import type { SessionSettings } from "../settings";
import { TranscriptBase } from "./base";
import { type Continuation, idle, isRunning } from "./continuation";
import { LocalIntents, type QueuedSend } from "./intents";
import { ObservedTurn } from "./observed";
import { ReplyPlacement, type WorkingList } from "./placement";
import { StreamRecords } from "./streams";
import { ToolBook } from "./tools";

/** The transport calls the rules make: upstream's `WebSocketChatTransport` in the app. */
export type TransportPort = Pick<
  WebSocketChatTransport<UIMessage>,
  | "appliedChunks"
  | "activeServerTurnId"
  | "handleServerTurnCompleted"
  | "handleStreamPending"
  | "handleStreamResumeNone"
  | "handleStreamResuming"
  | "isAwaitingResume"
  | "observeServerTurn"
  | "resetResumeState"
  | "retryPendingResume"
>;

/**
 * What the rules ask of the world, implemented by the session shell: the
 * model imports nothing from Vue, sockets or timers, and acts only through this.
 */
export interface Ports<M extends UIMessage> {
  readonly transport: TransportPort;
  settings(): SessionSettings<M>;
  /** The AI SDK chat's status (this client's own request). */
  status(): ChatStatus;
  /** The first transcript read is still out. */
  loading(): boolean;
  /** An AI SDK resume (a probe, or a tool continuation) owns the chat's response. */
  resuming(): boolean;
  send(frame: Record<string, unknown>): void;
  /**
   * Starts a transcript read (`attempt`: made again after an overtaken answer); its answer comes back through
   * `readAnswered`. False when none left (no reader, or none yet; a reconnect read with `resyncOnReconnect` off).
   */
  read(always: boolean, attempt?: number): boolean;
  /** Exact sync: asks the ordered server for a snapshot (a version was missed). */
  requestSnapshot(): void;
  /** Publishes the derived flags. */
  flags(flags: { serverStreaming?: boolean; recovering?: boolean; toolContinuation?: boolean; cached?: boolean }): void;
  /** Runs the effects pass once, after the current task's changes. */
  reconcile(): void;
  warn(key: string, message: string): void;
  /** A user callback that must not throw into the model. */
  call(name: string, run: () => void): void;
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
}

/** Everything the client knows of one conversation, and the ports it acts through. */
export class ChatModel<M extends UIMessage> {
  readonly base = new TranscriptBase();
  readonly intents = new LocalIntents<M>();
  readonly streams = new StreamRecords();
  readonly tools = new ToolBook();
  readonly placement: ReplyPlacement<M>;
  readonly observed: ObservedTurn<M>;
  readonly link: Link = { open: false, everOpened: false, sawClose: false, openedAt: 0 };
  readonly probes: Probes = { reconnect: false, idleNeeded: false, idleId: null, recovering: false, declined: null };
  /** The ids of a cached transcript on screen (`persist`), until the server's transcript replaces it. */
  cached: Set<string> | null = null;
  #continuationValue: Continuation = idle;

  constructor(
    readonly list: WorkingList<M>,
    readonly io: Ports<M>,
    /** Requests this client owns (the transport's `activeRequestIds`). */
    readonly local: Set<string>,
    newId: () => string
  ) {
    this.placement = new ReplyPlacement(list);
    this.observed = new ObservedTurn(list, this.intents, newId);
  }

  get continuation(): Continuation {
    return this.#continuationValue;
  }

  /** Moves the continuation; `isToolContinuation` is derived from it. */
  set continuation(next: Continuation) {
    this.#continuationValue = next;
    this.io.flags({ toolContinuation: isRunning(next) });
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
    const check = this.io.read(true) ? this.base.newestRead : undefined;
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
    return this.io.resuming() && !isRunning(this.continuation) && this.io.transport.isAwaitingResume();
  }

  /** Ends the observed turn. `hold`: the turn may still run unseen (a close), so client tools wait for it. */
  dropObserved(hold = true): void {
    if (hold && this.observed.streamId !== null) this.streams.heldTurn = this.observed.streamId;
    // Rule (no empty replies): a reply it left without a part goes once the chat settles; a frame brings it back if the turn stored one.
    const shell = this.observed.message?.id;
    if (shell !== undefined) this.streams.endedReplies.add(shell);
    this.observed.end();
    this.io.flags({ serverStreaming: false });
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
