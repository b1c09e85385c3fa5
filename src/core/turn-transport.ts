import { type AbstractChat, type ChatRequestOptions, type ChatTransport, type UIMessage, type UIMessageChunk, createIdGenerator } from "ai";
import type { PublishingChatState } from "./chat-state";
import * as CHAT_MESSAGE_TYPES from "./frame-types";
import { type ResponseFrame, chunkOf } from "./frames";
import type { ChatModel, HandshakeAnswer } from "./model";
import { launched, requested, settled } from "./model/continuation";
import { requestWentOut } from "./model/response-rules";
import { handshakeDropped, handshakeStarted, handshakeTimedOut, reconnectProbe } from "./model/resume-rules";
import { TurnStream } from "./turn-stream";

/** Request and resume probe ids, as short as upstream's. */
export const requestIds = createIdGenerator({ size: 8 });
/** Idle probes use longer ids than a resume's, as upstream does. */
export const probeIds = createIdGenerator({ size: 21 });

/** How long a resume probe waits for an answer the server should give at once. */
const PROBE_TIMEOUT_MS = 5_000;
/** How long it waits once the server said a turn is pending and will start (#1784), refreshed by each such word. */
const PENDING_TIMEOUT_MS = 60_000;

/** What a request asks the session for its body. */
export interface RequestShape<M extends UIMessage> {
  messages: M[];
  trigger: "submit-message" | "regenerate-message";
  messageId?: string;
}

/** What the transport needs from the session around it. */
export interface TransportHost<M extends UIMessage> {
  model(): ChatModel<M>;
  readonly state: PublishingChatState<M>;
  chat(): AbstractChat<M>;
  /** Sends a frame on the socket: false when the socket buffered it (not open). */
  send(data: string): boolean | void;
  /** The extra fields of a request's body. */
  prepareBody(request: RequestShape<M>): Promise<Record<string, unknown>>;
  reconcile(): void;
  disposed(): boolean;
}

/** A turn whose chunks the transport hands the AI SDK: a request, a resumed stream, or a tool continuation. */
interface Followed {
  kind: "request" | "resume" | "continuation";
  /** The server's request id; a continuation learns it from the offer. */
  id: string | null;
  stream: TurnStream;
  /** The server has the turn: the request went out, the offer was taken. */
  live: boolean;
  /** Parts left open by the replayed chunks dropped as applied: opened again before the next new chunk (#1951). */
  reopen?: Map<string, UIMessageChunk>;
  done: boolean;
}

/** The AI SDK's side of the resume handshake the model waits on (one at a time). */
interface Handshake {
  probeId: string;
  timer: ReturnType<typeof setTimeout> | undefined;
  settle(answer: { kind: "offer"; id: string } | { kind: "none" }): void;
}

/**
 * The chat's transport, owned by the session: the AI SDK's side of every
 * turn. It is the `ChatTransport` the AI SDK chat reads (requests and the
 * streams of the turns it renders) and it runs the AI SDK's resumes (one at a
 * time). The session hands it the frames of the turns it renders, already
 * decoded: no second parse, no frame strings made to be parsed again. What a
 * turn is and how a resume handshake goes is the model's (`model/turns.ts`,
 * `model/resume-rules.ts`); this performs the model's answers. On the wire it
 * speaks upstream's protocol byte for byte: `AIChatAgent`, Think and
 * `orderTranscript` cannot tell it from upstream's `WebSocketChatTransport`.
 */
export class TurnTransport<M extends UIMessage> implements ChatTransport<M> {
  readonly #host: TransportHost<M>;
  /** The turns whose chunks go to the AI SDK, by request id. */
  readonly #followed = new Map<string, Followed>();
  #handshake: Handshake | null = null;
  /** The tool continuation's stream, until it ends. */
  #continuation: Followed | null = null;
  /** The stream the last resume attached to, until it ends: let go locally when the chat resets. */
  #resumed: Followed | null = null;
  /** The AI SDK resume every caller shares (#1837). */
  #operation: Promise<void> | null = null;
  /** The error a resume started from; put back if it finds nothing (issue 21, 5). */
  #keptError: Error | undefined;
  #continuationTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(host: TransportHost<M>) {
    this.#host = host;
  }

  get #model(): ChatModel<M> {
    return this.#host.model();
  }

  /** A frame of a turn the transport renders: chunks go to its stream; an error or `done` ends it. */
  deliver(frame: ResponseFrame): void {
    const followed = this.#followed.get(frame.id);
    if (!followed) return;
    const ends = frame.error || frame.done;
    // Rule (a stopped turn is followed no further, issue 22, 3): stop() stops every request of this client's, also one
    // the AI SDK no longer calls active; its stream gets only its end (seed 2105573837: a delta without its text-start).
    if (!ends && !this.#model.turns.isRunning(frame.id)) return;
    // Rule (a probe that finds nothing keeps the error): until a request starts, or one sent before it streams (seed 1752099536).
    if (followed.kind === "request") this.#keptError = undefined;
    if (ends) this.#model.turns.at(frame.id).applied = null;
    if (frame.error) return this.#end(followed, (stream) => stream.fail(frame.body || "Stream error"));
    if (followed.kind === "request" || !this.#droppedAsApplied(followed, frame)) followed.stream.push(frame);
    if (frame.done) this.#end(followed, (stream) => stream.end());
  }

  /** Sends a chunk the session made to the stream of `id` (see `TurnStream.enqueue`). */
  enqueue(id: string, chunk: UIMessageChunk): void {
    this.#followed.get(id)?.stream.enqueue(chunk);
  }

  /** Rule (a superseded request's failure is not the chat's): the stream of `id` just ends. */
  endQuietly(id: string): void {
    const followed = this.#followed.get(id);
    if (followed) this.#end(followed, (stream) => stream.end());
  }

  /**
   * Rule (applied continuation chunks are dropped, #1951): a continuation's replay after a reconnect repeats
   * chunks this client applied live; those go (by `seq`). A part they leave open is opened again before the
   * next new chunk, so its deltas have a part to land in.
   */
  #droppedAsApplied(followed: Followed, frame: ResponseFrame): boolean {
    const turns = this.#model.turns;
    const open = (followed.reopen ??= new Map());
    if (turns.isAppliedReplay(frame)) {
      const chunk = chunkOf(frame) as { type?: string; id?: string; toolCallId?: string } | undefined;
      const type = chunk?.type ?? "";
      const key = type.startsWith("tool-input") ? `tool:${chunk!.toolCallId}` : `${type.replace(/-(start|end)$/, "")}:${chunk!.id}`;
      if (type === "text-start" || type === "reasoning-start" || type === "tool-input-start") open.set(key, chunk as UIMessageChunk);
      else if (type === "text-end" || type === "reasoning-end" || type === "tool-input-available" || type === "tool-input-error") open.delete(key);
      if (frame.replayComplete) followed.stream.flush();
      return true;
    }
    turns.recordApplied(frame.id, frame.seq);
    if (open.size > 0 && frame.body.trim()) {
      for (const chunk of open.values()) followed.stream.enqueue(chunk);
      open.clear();
    }
    return false;
  }

  /** Rule (a close interrupts the turn): a socket that had opened closed; no turn's end will reach these streams. */
  closed(): void {
    for (const followed of this.#followed.values()) this.#end(followed, (stream) => stream.interrupt(), { clearActive: false });
    // Before its offer a continuation has no server turn to interrupt: it ends, and the next open probes again.
    const waiting = this.#continuation;
    if (waiting && !waiting.live) this.#end(waiting, (stream) => stream.end());
  }

  /** Cancels the active server turn (and a tool continuation), whatever `cancelOnClientAbort` says. */
  cancelActiveServerTurn(): boolean {
    const turns = this.#model.turns;
    const active = turns.active;
    if (active !== null) {
      this.#sendCancel(active);
      const followed = this.#followed.get(active);
      if (followed && followed.kind !== "continuation") this.#end(followed, (stream) => stream.abort(), { keepId: true });
      turns.active = null;
    }
    return this.abortActiveToolContinuation() || active !== null;
  }

  /** Aborts the tool continuation's stream, cancelling its server turn once it has one. */
  abortActiveToolContinuation(): boolean {
    const continuation = this.#continuation;
    if (!continuation) return false;
    if (continuation.live) this.#sendCancel(continuation.id!);
    this.#end(continuation, (stream) => stream.abort(), { keepId: continuation.live });
    return true;
  }

  /**
   * Performs the model's answer to the waiting handshake: an offer becomes the stream the AI SDK resume reads
   * (or names the continuation's turn), "none" resolves it empty; "pending" and "retry" wait longer.
   */
  answer(answer: HandshakeAnswer): void {
    const handshake = this.#handshake;
    if (!handshake) return;
    if (answer.kind === "pending" || answer.kind === "retry") return this.#arm(handshake, answer.kind === "pending" ? PENDING_TIMEOUT_MS : PROBE_TIMEOUT_MS);
    clearTimeout(handshake.timer);
    this.#handshake = null;
    // A stream the resume attached to: the error it started from no longer applies.
    if (answer.kind === "offer") this.#keptError = undefined;
    handshake.settle(answer);
  }

  /** Lets go of every resume locally: the waiting handshake ends empty, the resumed stream ends as it stands. */
  letGo(): void {
    this.answer({ kind: "none" });
    const resumed = this.#resumed;
    if (resumed) this.#end(resumed, (stream) => stream.end());
  }

  #sendCancel(id: string): void {
    try {
      this.#host.send(JSON.stringify({ id, type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL }));
    } catch {
      // The socket is gone; the turn runs on without this client.
    }
  }

  /** Starts rendering a turn into a new stream. */
  #follow(kind: Followed["kind"], id: string | null): Followed {
    const followed: Followed = { kind, id, stream: new TurnStream(() => this.#letGo(followed)), live: kind === "resume", done: false };
    if (id !== null) this.#followed.set(id, followed);
    return followed;
  }

  /**
   * Ends a followed turn's stream once: `action` is its last word. `keepId`: the server turn was cancelled with
   * it, so it stays this client's until its end comes; `clearActive`: it is no longer the turn a stop cancels.
   */
  #end(followed: Followed, action: (stream: TurnStream) => void, { keepId = false, clearActive = true } = {}): void {
    if (followed.done) return;
    followed.done = true;
    const { id, kind } = followed;
    const turns = this.#model.turns;
    if (id !== null && this.#followed.get(id) === followed) this.#followed.delete(id);
    if (this.#resumed === followed) this.#resumed = null;
    if (this.#continuation === followed) {
      this.#continuation = null;
      // Its handshake is over too (a stop or a close before the offer).
      if (!followed.live && this.#handshake) {
        clearTimeout(this.#handshake.timer);
        this.#handshake = null;
        handshakeDropped(this.#model);
      }
    }
    if (clearActive && id !== null && kind !== "continuation" && turns.active === id) turns.active = null;
    action(followed.stream);
    if (id !== null) turns.released(id, keepId);
  }

  /**
   * Rule (a local abort keeps the server turn, unless `cancelOnClientAbort`): the AI SDK let go of a stream (a
   * stop, an abort); the turn runs on and can be resumed. With `cancelOnClientAbort` the server turn is
   * cancelled too, once the server has it.
   */
  #letGo(followed: Followed): void {
    if (followed.done) return;
    const { live } = followed;
    if (this.#model.io.settings().cancelOnClientAbort) {
      if (live) this.#sendCancel(followed.id!);
      this.#end(followed, (stream) => stream.abort(), { keepId: live });
    } else this.#end(followed, (stream) => stream.abort(), { clearActive: !live });
  }

  /** Sends a chat request; its stream carries the reply. */
  async sendMessages(options: Parameters<ChatTransport<M>["sendMessages"]>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const host = this.#host;
    const m = this.#model;
    const { messages, trigger } = options;
    const id = requestIds();
    const extra = { ...(await host.prepareBody({ messages, trigger, messageId: options.messageId })), ...(options.body as object | undefined) };
    const body = JSON.stringify({ messages, trigger, ...extra });
    m.turns.followed(id, "request");
    const followed = this.#follow("request", id);
    const signal = options.abortSignal;
    signal?.addEventListener("abort", () => this.#letGo(followed), { once: true });
    if (signal?.aborted) this.#letGo(followed);
    if (followed.done) return followed.stream.readable;
    followed.live = true;
    const sentId = messages.findLast((message) => message.role === "user")?.id;
    m.dispatch(() => requestWentOut(m, id, sentId));
    const frame = { id, init: { method: "POST", body }, type: CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST };
    // A submit the socket buffered: the server has not seen its message yet (#1983).
    if (host.send(JSON.stringify(frame)) === false && trigger === "submit-message" && sentId !== undefined) m.intents.buffered.add(sentId);
    return followed.stream.readable;
  }

  /**
   * Rule (one handshake at a time): the AI SDK resume. A tool continuation gets a deferred stream at once (the
   * status is `submitted` while the server starts it); otherwise a probe asks what runs, and the stream of an
   * offer the model takes resolves it, nothing or no answer resolves null.
   */
  async reconnectToStream(): Promise<ReadableStream<UIMessageChunk> | null> {
    if (this.#handshake) return null;
    if (this.#model.continuation.kind === "probing" && !this.#continuation) {
      const followed = this.#follow("continuation", null);
      this.#continuation = this.#resumed = followed;
      this.#startHandshake(true, (answer) => {
        if (followed.done) return;
        if (answer.kind === "none") return this.#end(followed, (stream) => stream.end());
        followed.id = answer.id;
        followed.live = true;
        this.#followed.set(answer.id, followed);
      });
      return followed.stream.readable;
    }
    return new Promise((resolve) =>
      this.#startHandshake(false, (answer) => {
        if (answer.kind === "none") return resolve(null);
        const followed = this.#follow("resume", answer.id);
        this.#resumed = followed;
        resolve(followed.stream.readable);
      })
    );
  }

  #startHandshake(continuation: boolean, settle: Handshake["settle"]): void {
    const m = this.#model;
    const handshake: Handshake = { probeId: requestIds(), timer: undefined, settle };
    this.#handshake = handshake;
    this.#arm(handshake, PROBE_TIMEOUT_MS);
    m.dispatch(() => handshakeStarted(m, handshake.probeId, continuation));
  }

  /** (Re)starts the handshake's backstop: without an answer by then, it resolves empty. */
  #arm(handshake: Handshake, ms: number): void {
    const m = this.#model;
    clearTimeout(handshake.timer);
    handshake.timer = setTimeout(() => m.dispatch(() => handshakeTimedOut(m, handshake.probeId)), ms);
  }

  // ─── The AI SDK resume ────────────────────────────────────────────

  /** An AI SDK resume runs. */
  get resuming(): boolean {
    return this.#operation !== null;
  }

  /** The error a running resume would put back no longer applies (cleared, a stream attached, the probe given up). */
  forgetError(): void {
    this.#keptError = undefined;
  }

  /** Rule (one resume at a time, #1837): every caller shares the running AI SDK resume. */
  resume(options?: ChatRequestOptions): Promise<void> {
    if (this.#operation) return this.#operation;
    const { state } = this.#host;
    const model = this.#model;
    const error = state.status === "error" ? state.error : undefined;
    // Rule (a cut is not a failure): a request the close cut off ends as the reconnect finds it, resumed or stored, not as an error.
    this.#keptError = model.turns.isCut(error) ? undefined : error;
    const operation: Promise<void> = this.#host
      .chat()
      .resumeStream(options)
      .finally(() => {
        if (this.#operation !== operation || this.#host.disposed()) return;
        this.#operation = null;
        // Rule (a probe that finds nothing keeps the error): as upstream, until it is cleared or a request starts.
        const kept = this.#keptError;
        if (kept && state.status === "ready" && state.error === undefined) {
          state.error = kept;
          state.status = "error";
        }
        // An open edge that arrived while this ran is retried, not lost.
        this.probeAfterReconnect();
        this.#host.reconcile();
      });
    this.#operation = operation;
    return operation;
  }

  /** Rule (reconnect probe): a reopened socket asks what still runs, through the AI SDK resume when it may. */
  probeAfterReconnect(): void {
    const m = this.#model;
    if (!this.#host.disposed() && m.dispatch(() => reconnectProbe(m, probeIds)) === "resume") void this.resume().catch(() => {});
  }

  /** A tool output or approval asks the server to continue the turn (with `autoContinueAfterToolResult`). */
  requestContinuation(): void {
    const m = this.#model;
    if (!m.io.settings().autoContinueAfterToolResult) return;
    m.continuation = requested(m.continuation);
    this.launchContinuation();
  }

  /** Rule (continuation probe): once the chat is ready, the AI SDK resume attaches to the continuation. */
  launchContinuation(): void {
    const { state } = this.#host;
    const model = this.#model;
    if (model.continuation.kind !== "scheduled" || state.status !== "ready" || this.#continuationTimer) return;
    const timer = setTimeout(async () => {
      // A resume may still own the AI SDK's active response.
      while (this.#operation) await this.#operation.catch(() => {});
      if (this.#continuationTimer === timer) this.#continuationTimer = undefined;
      const c = model.continuation;
      if (this.#host.disposed() || c.kind !== "scheduled" || state.status !== "ready") return;
      model.continuation = launched(c);
      model.placement.pinLast();
      await this.resume()
        .catch((error: unknown) => console.error("[agents-vue] Tool continuation failed:", error))
        .finally(() => {
          model.continuation = settled(model.continuation, c.token);
          this.#host.reconcile();
        });
    }, 0);
    this.#continuationTimer = timer;
  }

  /** The session ends: every resume lets go locally (their server turns run on). */
  dispose(): void {
    this.letGo();
    this.#operation = null;
    clearTimeout(this.#continuationTimer);
  }
}
