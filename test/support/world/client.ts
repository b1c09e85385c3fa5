import type { AbstractChat, ChatStatus } from "ai";
import type { ChatFrame, ResponseFrame } from "../../../src/core/frames";
import { ChatModel, type Ports } from "../../../src/core/model";
import type { TranscriptRead } from "../../../src/core/model/base";
import { isRunning, launched, requested, settled, stoppedBeforeStart } from "../../../src/core/model/continuation";
import type { QueuedSend } from "../../../src/core/model/intents";
import type { WorkingList } from "../../../src/core/model/placement";
import { collapseReplays, droppedTextStart, onResponse, ownTurnFinished } from "../../../src/core/model/response-rules";
import { onPending, onRecovering, onResumeNone, onStreamResuming, reconnectProbe, socketClosed, socketOpened } from "../../../src/core/model/resume-rules";
import { applyMessageUpdate, applySnapshot, firstReadAnswered, localClear, localReplace, receivedClear, removeEmptyReplies } from "../../../src/core/model/transcript-rules";
import { CHAT_MESSAGE_TYPES } from "agents/chat";
import { ToolActions } from "../../../src/core/tool-actions";
import { TinyLedger, defaultSettings } from "../model-harness";
import { type Chunk, type M, type Part, WorldError, type WorldOptions, type WorldPort, clone } from "./shared";

/**
 * This client without a browser: a stream of UI chunks, upstream's
 * `WebSocketChatTransport` and the AI SDK's `AbstractChat` reduced to their
 * effects, under a mirror of `src/core/session.ts` that routes every event
 * into the model's rules. Where the real code awaits, the mirror continues in
 * a microtask of the world.
 */

// ─── Deferred work ─────────────────────────────────────────────────────

/** A settle-once operation whose continuations run as microtasks, as a promise's do. */
class Op<T = void> {
  private readonly callbacks: Array<(value: T) => void> = [];
  settled = false;
  private value: T | undefined;

  constructor(private readonly world: WorldPort) {}

  after(callback: (value: T) => void): void {
    if (this.settled) this.world.microtask(() => callback(this.value as T));
    else this.callbacks.push(callback);
  }

  settle(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.value = value;
    for (const callback of this.callbacks.splice(0)) this.world.microtask(() => callback(value));
  }
}

// ─── The client: a stream, the transport, the AI SDK chat ─────────────

interface StreamConsumer {
  chunk(chunk: Chunk): void;
  close(): void;
  error(error: Error): void;
}

type StreamEvent = { kind: "chunk"; chunk: Chunk } | { kind: "close" } | { kind: "error"; error: Error };

/** A `ReadableStream` of UI chunks, reduced to what the AI SDK reads: each event reaches the reader as a microtask. */
class SimStream {
  private readonly buffered: StreamEvent[] = [];
  private consumer: StreamConsumer | null = null;
  private ended = false;
  cancelled = false;
  onCancel: (() => void) | null = null;

  constructor(private readonly world: WorldPort) {}

  enqueue(chunk: Chunk): void {
    if (!this.ended) this.push({ kind: "chunk", chunk });
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.push({ kind: "close" });
  }

  error(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.push({ kind: "error", error });
  }

  cancel(): void {
    this.cancelled = true;
    this.onCancel?.();
  }

  attach(consumer: StreamConsumer): void {
    this.consumer = consumer;
    for (const event of this.buffered.splice(0)) this.dispatch(event);
  }

  private push(event: StreamEvent): void {
    if (this.consumer) this.dispatch(event);
    else this.buffered.push(event);
  }

  private dispatch(event: StreamEvent): void {
    const consumer = this.consumer!;
    this.world.microtask(() => {
      if (this.cancelled) return;
      if (event.kind === "chunk") consumer.chunk(event.chunk);
      else if (event.kind === "close") consumer.close();
      else consumer.error(event.error);
    });
  }
}

interface FrameListener {
  frame(frame: ResponseFrame): void;
  close(): void;
}

const abortError = () => Object.assign(new Error("Aborted"), { name: "AbortError" });
const noop = () => {};

/**
 * Replayed chunks wait in a batch until the replay pauses (a timer) or a
 * live, terminal or replay-complete frame ends it; a replayed `start` of the
 * same message supersedes the pass buffered before it.
 */
class ReplayBatch {
  private chunks: Chunk[] = [];
  private startId: unknown;
  private timer: (() => void) | null = null;

  constructor(
    private readonly world: WorldPort,
    private readonly stream: SimStream
  ) {}

  apply(frame: ResponseFrame): void {
    const ends = !frame.replay || frame.done || frame.replayComplete;
    const body = frame.body.trim();
    if (!body) {
      if (ends) this.flush();
      return;
    }
    const chunk = JSON.parse(body) as Chunk;
    if (ends) {
      this.flush();
      this.stream.enqueue(chunk);
      return;
    }
    if (chunk.type === "start" && !frame.continuation && chunk.messageId !== undefined && chunk.messageId === this.startId) this.discard();
    if (this.chunks.length === 0) this.timer = this.world.setTimer("replay batch", () => this.flush());
    if (chunk.type === "start") this.startId = chunk.messageId;
    this.chunks.push(chunk);
  }

  private discard(): void {
    this.chunks = [];
    this.startId = undefined;
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.timer) this.world.clearTimer(this.timer);
    this.timer = null;
  }

  flush(): void {
    this.cancelTimer();
    const chunks = this.chunks;
    this.chunks = [];
    this.startId = undefined;
    for (const chunk of chunks) this.stream.enqueue(chunk);
  }

  get isEmpty(): boolean {
    return this.chunks.length === 0;
  }
}

/** Drops replayed continuation chunks already applied and re-opens a part they left open (#1951). */
class ContinuationFilter {
  private readonly open = new Map<string, string>();

  constructor(
    private readonly ledger: TinyLedger,
    private readonly requestId: string
  ) {}

  frames(frame: ResponseFrame): ResponseFrame[] {
    if (this.ledger.isAppliedReplay(this.requestId, frame)) {
      this.track(frame.body);
      return frame.body.trim() ? [{ ...frame, body: "" }] : [frame];
    }
    this.ledger.record(this.requestId, frame.seq);
    if (this.open.size === 0 || !frame.body.trim()) return [frame];
    const reopened = [...this.open.values()].map((body) => ({ ...frame, body, seq: undefined }));
    this.open.clear();
    return [...reopened, frame];
  }

  private track(body: string): void {
    const chunk = JSON.parse(body || "{}") as Chunk;
    if (chunk.type === "text-start") this.open.set(`text:${String(chunk.id)}`, body);
    else if (chunk.type === "text-end") this.open.delete(`text:${String(chunk.id)}`);
    else if (chunk.type === "tool-input-start") this.open.set(`tool:${String(chunk.toolCallId)}`, body);
    else if (chunk.type === "tool-input-available") this.open.delete(`tool:${String(chunk.toolCallId)}`);
  }
}

/** The ledger with the transport's bound: it forgets the oldest of 32 requests. */
class BoundedLedger extends TinyLedger {
  override record(requestId: string, seq: number | undefined): void {
    if (seq === undefined) return;
    const applied = Math.max(seq, this.applied.get(requestId) ?? -1);
    this.applied.delete(requestId);
    this.applied.set(requestId, applied);
    if (this.applied.size > 32) this.applied.delete(this.applied.keys().next().value as string);
  }
}

/** The callbacks one resume handshake owns on the transport. */
interface Handshake {
  resume: ((data: { id: string }) => void) | null;
  none: ((data: { probeId?: string }) => boolean) | null;
  pending: (() => void) | null;
  retry: (() => void) | null;
}

/** Upstream's `WebSocketChatTransport`, reduced to its effects, over the shell's socket bridge. */
class SimTransport {
  readonly appliedChunks = new BoundedLedger();
  activeServerTurnId: string | null = null;
  private cancelAttached: (() => boolean) | null = null;
  private resumeResolver: ((data: { id: string }) => void) | null = null;
  private resumeNoneResolver: ((data: { probeId?: string }) => boolean) | null = null;
  private pendingHook: (() => void) | null = null;
  private retryProbe: (() => void) | null = null;
  private expectContinuation = false;
  private abortContinuation: (() => boolean) | null = null;
  /** Ends the resume stream attached last, as it stands, without cancelling the server's turn. */
  private detachResume: (() => boolean) | null = null;
  readonly listeners = new Set<FrameListener>();

  constructor(
    private readonly world: WorldPort,
    private readonly client: SimClient
  ) {}

  /** Sends through the bridge's transport view (the shell sees ACKs there). */
  private send(frame: Record<string, unknown>): boolean {
    this.client.onTransportSend(frame);
    return this.world.clientSend(frame);
  }

  private listen(listener: FrameListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setActive(requestId: string, cancel: (() => boolean) | null): void {
    this.activeServerTurnId = requestId;
    this.cancelAttached = cancel;
  }

  private clearActive(requestId: string): void {
    if (this.activeServerTurnId === requestId) {
      this.activeServerTurnId = null;
      this.cancelAttached = null;
    }
  }

  cancelActiveServerTurn(): boolean {
    const requestId = this.activeServerTurnId;
    let cancelled = false;
    if (requestId) {
      this.send({ type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL, id: requestId });
      this.cancelAttached?.();
      this.clearActive(requestId);
      cancelled = true;
    }
    return this.abortActiveToolContinuation() || cancelled;
  }

  expectToolContinuation(): void {
    this.expectContinuation = true;
  }

  abortActiveToolContinuation(): boolean {
    return this.abortContinuation?.() ?? false;
  }

  isAwaitingResume(): boolean {
    return this.resumeResolver !== null || this.resumeNoneResolver !== null;
  }

  cancelPendingResume(): boolean {
    return this.resumeNoneResolver?.({}) ?? false;
  }

  resetResumeState(): void {
    this.expectContinuation = false;
    this.cancelPendingResume();
    this.detachResume?.();
  }

  retryPendingResume(): boolean {
    const retry = this.retryProbe;
    if (!retry) return false;
    retry();
    return true;
  }

  handleStreamResuming(data: { id: string }): boolean {
    if (!this.resumeResolver) return false;
    this.resumeResolver(data);
    return true;
  }

  handleStreamResumeNone(data: { probeId?: string } = {}): boolean {
    if (!this.resumeNoneResolver) return false;
    return this.resumeNoneResolver(data);
  }

  handleStreamPending(): boolean {
    if (!this.pendingHook) return false;
    this.pendingHook();
    return true;
  }

  handleServerTurnCompleted(requestId: string): void {
    this.clearActive(requestId);
  }

  observeServerTurn(requestId: string): void {
    this.setActive(requestId, null);
  }

  /** A chat request: the reply streams on the returned stream. `onAbort` is the AI SDK's abort signal. */
  sendMessages(request: { messages: M[]; trigger: "submit-message" | "regenerate-message"; messageId?: string }, abort: { listeners: Array<() => void> }): SimStream {
    const requestId = this.world.newId("r");

    this.client.prepareBody(request);
    this.client.local.add(requestId);
    const stream = new SimStream(this.world);
    let requestSent = false;
    const { finish, completed, listen } = this.attach(requestId, stream);
    const onAbort = () => {
      if (!completed()) finish(() => stream.error(abortError()), false, !requestSent);
    };
    listen({
      frame: (frame) => {
        if (frame.id !== requestId) return;
        if (frame.error) return finish(() => stream.error(new Error(frame.body || "Stream error")));
        if (frame.body.trim()) stream.enqueue(JSON.parse(frame.body) as Chunk);
        if (frame.done) finish(() => stream.close());
      },
      close: () => finish(() => interrupt(stream), false, false)
    });
    stream.onCancel = onAbort;
    abort.listeners.push(onAbort);
    requestSent = true;
    const sent = this.send({ type: CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST, id: requestId, messages: clone(request.messages), trigger: request.trigger });
    if (!sent && request.trigger === "submit-message") {
      const last = request.messages.findLast((message) => message.role === "user");
      if (last) this.client.model.intents.buffered.add(last.id);
    }
    return stream;
  }

  /** The AI SDK's resume: a probe (or, when a tool continuation is expected, a deferred continuation stream). */
  reconnectToStream(): Op<SimStream | null> {
    const result = new Op<SimStream | null>(this.world);
    if (this.isAwaitingResume()) {
      result.settle(null);
      return result;
    }
    if (this.expectContinuation) {
      this.expectContinuation = false;
      result.settle(this.continuationStream());
      return result;
    }
    const probeId = this.world.newId("p");
    let resolved = false;
    const owned: Handshake = {
      resume: null,
      none: null,
      pending: null,
      retry: null
    };
    // The probe's timeout (5 s, 60 s once the server says a turn is pending): it fires only once nothing else happens.
    let timeout: (() => void) | null = null;
    const arm = () => {
      if (timeout) this.world.clearTimer(timeout);
      timeout = this.world.setTimer("probe timeout", () => done(null), true);
    };
    const done = (value: SimStream | null) => {
      if (resolved) return;
      resolved = true;
      if (timeout) this.world.clearTimer(timeout);
      if (this.resumeResolver === owned.resume) this.resumeResolver = null;
      if (this.resumeNoneResolver === owned.none) this.resumeNoneResolver = null;
      if (this.pendingHook === owned.pending) this.pendingHook = null;
      if (this.retryProbe === owned.retry) this.retryProbe = null;
      result.settle(value);
    };
    owned.pending = () => {
      if (!resolved) arm();
    };
    owned.none = (data) => {
      if (data.probeId && data.probeId !== probeId) return false;
      done(null);
      return true;
    };
    owned.resume = (data) => {
      if (this.client.local.has(data.id)) this.world.gap("probe-takes-own-request");
      this.client.local.add(data.id);
      const stream = this.resumeStream(data.id);
      this.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id: data.id });
      done(stream);
    };
    owned.retry = () => {
      if (resolved) return;
      arm();
      this.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId });
    };
    this.pendingHook = owned.pending;
    this.resumeNoneResolver = owned.none;
    this.resumeResolver = owned.resume;
    this.retryProbe = owned.retry;
    owned.retry();
    return result;
  }

  /**
   * A stream of request `requestId` the transport attached: the active server
   * turn, ended once by `finish` (`keepId`: the id stays this client's until
   * the server's done; `clearServerTurn`: it is no longer the active turn).
   */
  private attach(requestId: string, stream: SimStream) {
    let done = false;
    let unlisten: () => void = noop;
    const finish = (action: () => void, keepId = false, clearServerTurn = true) => {
      if (done) return;
      done = true;
      if (clearServerTurn) this.clearActive(requestId);
      action();
      if (!keepId) this.client.local.delete(requestId);
      unlisten();
    };
    this.setActive(requestId, () => {
      if (done) return false;
      finish(() => stream.error(abortError()), true);
      return true;
    });
    return { finish, completed: () => done, listen: (listener: FrameListener) => void (unlisten = this.listen(listener)) };
  }

  private resumeStream(requestId: string): SimStream {
    const stream = new SimStream(this.world);
    const { finish, completed, listen } = this.attach(requestId, stream);
    const batch = new ReplayBatch(this.world, stream);
    const filter = new ContinuationFilter(this.appliedChunks, requestId);
    listen({
      frame: (frame) => {
        if (frame.id !== requestId) return;
        if (frame.error) {
          this.appliedChunks.forget(requestId);
          return finish(() => failStream(stream, batch, frame.body || "Stream error"));
        }
        for (const piece of filter.frames(frame)) batch.apply(piece);
        if (frame.done) {
          this.appliedChunks.forget(requestId);
          finish(() => stream.close());
        }
      },
      close: () => finish(() => interrupt(stream, batch), false, false)
    });
    stream.onCancel = () => finish(() => {}, false, false);
    // A detach ref left from an ended stream does nothing: it checks `completed` first.
    this.detachResume = () => {
      if (completed()) return false;
      finish(() => {
        batch.flush();
        stream.close();
      });
      return true;
    };
    return stream;
  }

  /** The stream a tool continuation renders: returned at once; it asks for the continuation and takes the offer that answers. */
  private continuationStream(): SimStream {
    const stream = new SimStream(this.world);
    const local = this.client.local;
    const probeId = this.world.newId("p");
    let completed = false;
    let requestId: string | null = null;
    let unlisten: () => void = noop;
    const batch = new ReplayBatch(this.world, stream);
    let filter: ContinuationFilter | null = null;
    const owned: Handshake & { abort: (() => boolean) | null } = {
      resume: null,
      none: null,
      pending: null,
      retry: null,
      abort: null
    };
    const clearHandshake = () => {
      if (this.resumeResolver === owned.resume) this.resumeResolver = null;
      if (this.resumeNoneResolver === owned.none) this.resumeNoneResolver = null;
      if (this.pendingHook === owned.pending) this.pendingHook = null;
      if (this.retryProbe === owned.retry) this.retryProbe = null;
    };
    let timeout: (() => void) | null = null;
    const disarm = () => {
      if (timeout) this.world.clearTimer(timeout);
      timeout = null;
    };
    const arm = () => {
      disarm();
      timeout = this.world.setTimer("continuation probe timeout", () => finish(() => stream.close()), true);
    };
    const finish = (action: () => void, keepId = false) => {
      if (completed) return;
      completed = true;
      disarm();
      if (this.abortContinuation === owned.abort) this.abortContinuation = null;
      clearHandshake();
      action();
      if (requestId && !keepId) local.delete(requestId);
      unlisten();
    };
    owned.abort = () => {
      if (completed) return false;
      if (requestId === null) {
        finish(() => stream.error(abortError()));
        return true;
      }
      this.send({ type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL, id: requestId });
      finish(() => stream.error(abortError()), true);
      return true;
    };
    this.abortContinuation = owned.abort;
    owned.none = (data) => {
      if (data.probeId && data.probeId !== probeId) return false;
      finish(() => stream.close());
      return true;
    };
    owned.resume = (data) => {
      if (requestId) return;
      if (local.has(data.id)) this.world.gap("probe-takes-own-request");
      requestId = data.id;
      local.add(data.id);
      clearHandshake();
      disarm();
      this.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id: data.id });
    };
    owned.pending = () => {
      if (!completed) arm();
    };
    owned.retry = () => {
      if (completed || requestId !== null) return;
      arm();
      this.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId });
    };
    this.resumeResolver = owned.resume;
    this.resumeNoneResolver = owned.none;
    this.pendingHook = owned.pending;
    this.retryProbe = owned.retry;
    unlisten = this.listen({
      frame: (frame) => {
        if (requestId === null || frame.id !== requestId) return;
        if (frame.error) {
          this.appliedChunks.forget(requestId);
          return finish(() => failStream(stream, batch, frame.body || "Stream error"));
        }
        filter ??= new ContinuationFilter(this.appliedChunks, requestId);
        for (const piece of filter.frames(frame)) batch.apply(piece);
        if (frame.done) {
          this.appliedChunks.forget(requestId);
          finish(() => stream.close());
        }
      },
      close: () => finish(() => (requestId === null ? stream.close() : interrupt(stream, batch)))
    });
    stream.onCancel = () => finish(() => {});
    owned.retry();
    return stream;
  }
}

/** A socket that closed mid-stream ends the stream with an error chunk (#2013). */
function interrupt(stream: SimStream, batch?: ReplayBatch): void {
  batch?.flush();
  stream.enqueue({ type: "error", errorText: "WebSocket closed mid-stream" });
  stream.close();
}

function failStream(stream: SimStream, batch: ReplayBatch, message: string): void {
  if (batch.isEmpty) return stream.error(new Error(message));
  batch.flush();
  stream.enqueue({ type: "error", errorText: message });
  stream.close();
}

interface Response {
  trigger: "submit-message" | "regenerate-message" | "resume-stream";
  state: { message: M; text: Map<string, Record<string, unknown>>; finishReason?: string };
  usesEarlier: boolean;
  originalId: string | undefined;
  resume: boolean;
  firstStart: boolean;
  aborted: boolean;
  ended: boolean;
  abort: { listeners: Array<() => void> };
  completion: Op;
  /** The stream it reads, once it has one. */
  stream: SimStream | null;
}

/** A tool part with the output `addToolOutput` gave, or the part itself when it is another call. */
function answered(part: Part, options: { toolCallId: string; output?: unknown; state?: string; errorText?: string }): Part {
  const call = part as { toolCallId?: string };
  if (!String(part.type).startsWith("tool-") || call.toolCallId !== options.toolCallId) return part;
  return options.state === "output-error"
    ? ({ ...part, state: "output-error", output: undefined, errorText: options.errorText } as Part)
    : ({ ...part, state: "output-available", output: options.output, errorText: undefined } as Part);
}

/** The AI SDK's `AbstractChat`, reduced to what it does to the working list, its status and its callbacks. */
class SimChat {
  status: ChatStatus = "ready";
  activeResponse: Response | null = null;
  activeResume: Response | null = null;

  constructor(
    private readonly world: WorldPort,
    private readonly client: SimClient
  ) {}

  private get list(): WorkingList<M> {
    return this.client.list;
  }

  private setStatus(status: ChatStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.client.onStateChange("status");
  }

  /**
   * `sendMessage`: pushes (or, with `messageId`, rewrites) the user message,
   * then requests. Text input is converted first (a microtask); a whole
   * message (a queued send) is pushed at once.
   */
  sendMessage(message: M & { messageId?: string }, textInput = true): Op {
    const completion = new Op(this.world);
    const run = () => {
      const { messageId, ...rest } = message;
      const messages = this.list.messages;
      if (messageId !== undefined) {
        const index = messages.findIndex((candidate) => candidate.id === messageId);
        if (index < 0 || messages[index]!.role !== "user") return completion.settle();
        this.client.setList(messages.slice(0, index + 1));
        this.client.place({ ...rest, id: messageId, role: "user" } as M, index);
      } else this.client.place(rest as M);
      this.makeRequest("submit-message", messageId, completion);
    };
    if (textInput) this.world.microtask(run);
    else run();
    return completion;
  }

  regenerate(): Op {
    const completion = new Op(this.world);
    this.world.microtask(() => {
      const messages = this.list.messages;
      const index = messages.length - 1;
      if (index < 0) return completion.settle();
      this.client.setList(messages.slice(0, messages[index]!.role === "assistant" ? index : index + 1));
      this.makeRequest("regenerate-message", undefined, completion);
    });
    return completion;
  }

  resumeStream(): Op {
    const completion = new Op(this.world);
    this.makeRequest("resume-stream", undefined, completion);
    return completion;
  }

  stop(): Op {
    const done = new Op(this.world);
    const waits = [this.activeResume, this.activeResponse].filter((response): response is Response => response !== null);
    for (const response of waits) this.abort(response);
    let left = waits.length;
    if (left === 0) this.world.microtask(() => done.settle());
    for (const response of waits) response.completion.after(() => --left === 0 && done.settle());
    return done;
  }

  /** `addToolOutput`: the part shows the output, in the list and in the active response. */
  addToolOutput(options: { toolCallId: string; output?: unknown; state?: string; errorText?: string }): Promise<void> {
    const update = (part: Part) => answered(part, options);
    this.world.microtask(() => {
      const messages = this.list.messages;
      const index = messages.findIndex((message) => message.parts.some((part) => (part as { toolCallId?: string }).toolCallId === options.toolCallId));
      if (index >= 0) this.client.place({ ...messages[index]!, parts: messages[index]!.parts.map(update) }, index);
      const active = this.activeResponse;
      if (active) active.state.message.parts = active.state.message.parts.map(update);
    });
    return Promise.resolve();
  }

  addToolApprovalResponse(): Promise<void> {
    throw new WorldError("the world has no approvals");
  }

  private isCurrent(response: Response): boolean {
    return !response.resume || this.activeResume === response;
  }

  private makeRequest(trigger: Response["trigger"], messageId: string | undefined, completion: Op): void {
    const response: Response = {
      trigger,
      state: { message: { id: "", role: "assistant", parts: [] }, text: new Map() },
      usesEarlier: false,
      originalId: undefined,
      resume: trigger === "resume-stream",
      firstStart: true,
      aborted: false,
      ended: false,
      abort: { listeners: [] },
      completion,
      stream: null
    };
    if (!response.resume) return this.start(response, null, messageId);
    if (this.activeResume) this.abort(this.activeResume);
    this.activeResume = response;
    this.client.transport.reconnectToStream().after((stream) => {
      if (response.aborted || !this.isCurrent(response)) {
        stream?.cancel();
        if (this.isCurrent(response)) this.setStatus("ready");
        if (this.activeResume === response) this.activeResume = null;
        return completion.settle();
      }
      if (!stream) {
        this.setStatus("ready");
        if (this.activeResume === response) this.activeResume = null;
        return completion.settle();
      }
      this.start(response, stream, undefined);
    });
  }

  private start(response: Response, resumed: SimStream | null, messageId: string | undefined): void {
    this.setStatus("submitted");
    const messages = this.list.messages;
    const index = response.trigger === "submit-message" && messageId !== undefined ? messages.findIndex((message) => message.id === messageId) : messages.length - 1;
    const responseMessage = index === -1 ? messages.at(-1) : messages[index];
    response.originalId = responseMessage?.id;
    const resumable =
      response.resume &&
      responseMessage?.role === "assistant" &&
      responseMessage.parts.some((part) => {
        const state = (part as { state?: string }).state;
        return String(part.type).startsWith("tool-") && (state === "input-streaming" || state === "approval-responded");
      });
    const last = response.resume ? (resumable ? responseMessage : undefined) : response.trigger === "regenerate-message" ? undefined : responseMessage;
    response.state.message = last?.role === "assistant" ? clone(last) : { id: this.world.newId("g"), role: "assistant", parts: [] };
    response.usesEarlier = index !== -1 && index < messages.length - 1 && responseMessage?.role === "assistant";
    this.activeResponse = response;
    const stream =
      resumed ??
      this.client.transport.sendMessages(
        { messages: this.list.messages, trigger: response.trigger as "submit-message" | "regenerate-message", ...(messageId !== undefined ? { messageId } : {}) },
        response.abort
      );
    response.stream = stream;
    stream.attach({
      chunk: (chunk) => this.process(response, chunk),
      close: () => this.end(response, null),
      error: (error) => this.end(response, error)
    });
  }

  /**
   * The abort signal fires: the transport's listener runs and the AI SDK
   * cancels the stream it reads, then the request ends as an abort. A resume
   * still waiting for the transport's handshake ends only once that settles
   * (the transport does not watch the signal).
   */
  abort(response: Response): void {
    if (response.aborted || response.ended) return;
    response.aborted = true;
    for (const listener of response.abort.listeners) listener();
    if (!response.stream) return;
    response.stream.cancel();
    this.world.microtask(() => this.end(response, abortError()));
  }

  private write(response: Response, updateStatus = true): void {
    if (response.aborted) return;
    if (updateStatus) this.setStatus("streaming");
    const message = response.state.message;
    const messages = this.list.messages;
    const existing = messages.findLastIndex((candidate) => candidate.id === message.id);
    if (existing !== -1) return this.client.place(message, existing);
    if (response.usesEarlier) {
      const original = messages.findLastIndex((candidate) => candidate.id === response.originalId);
      if (original !== -1) return this.client.place(message, original);
    }
    this.client.place(message);
  }

  /** One chunk, as `processUIMessageStream` applies it; a chunk it cannot apply fails the request. */
  private process(response: Response, chunk: Chunk): void {
    if (response.ended || response.aborted) return;
    const state = response.state;
    const parts = state.message.parts as Array<Record<string, unknown>>;
    const fail = (message: string) => this.end(response, new Error(message));
    switch (chunk.type) {
      case "start": {
        const reset = response.resume && chunk.messageId !== undefined && chunk.messageId !== state.message.id;
        response.firstStart = false;
        if (reset) {
          state.message = { id: (chunk.messageId as string | undefined) ?? state.message.id, role: "assistant", parts: [] };
          state.text = new Map();
        }
        if (chunk.messageId !== undefined) state.message.id = chunk.messageId as string;
        if (reset || chunk.messageId !== undefined) this.write(response, false);
        return;
      }
      case "text-start": {
        const part = { type: "text", text: "", state: "streaming" };
        state.text.set(chunk.id as string, part);
        parts.push(part);
        return this.write(response);
      }
      case "text-delta": {
        const part = state.text.get(chunk.id as string);
        if (!part) return fail(`Received text-delta for missing text part with ID "${String(chunk.id)}".`);
        part.text = `${String(part.text)}${String(chunk.delta)}`;
        return this.write(response);
      }
      case "text-end": {
        const part = state.text.get(chunk.id as string);
        if (!part) return fail(`Received text-end for missing text part with ID "${String(chunk.id)}".`);
        part.state = "done";
        state.text.delete(chunk.id as string);
        return this.write(response);
      }
      case "tool-input-start":
      case "tool-input-available": {
        const existing = parts.find((part) => part.toolCallId === chunk.toolCallId);
        const next = chunk.type === "tool-input-start" ? { state: "input-streaming", input: undefined } : { state: "input-available", input: chunk.input };
        if (existing) Object.assign(existing, next);
        else parts.push({ type: `tool-${String(chunk.toolName)}`, toolCallId: chunk.toolCallId, ...next });
        return this.write(response);
      }
      case "finish":
        state.finishReason = "stop";
        if (chunk.messageMetadata !== undefined) {
          state.message.metadata = { ...(state.message.metadata as object | undefined), ...(chunk.messageMetadata as object) };
          this.write(response);
        }
        return;
      case "error":
        return fail(String(chunk.errorText));
      default:
    }
  }

  private end(response: Response, error: Error | null): void {
    if (response.ended) return;
    response.ended = true;
    const current = this.isCurrent(response);
    let isAbort = false;
    let isError = false;
    if (response.aborted || error?.name === "AbortError") {
      isAbort = true;
      if (current) this.setStatus("ready");
    } else if (error) {
      if (current) {
        isError = true;
        this.setStatus("error");
      }
    } else if (current) this.setStatus("ready");
    this.client.onFinish({ message: response.state.message, messages: this.list.messages, isAbort, isError, isDisconnect: false });
    if (this.activeResponse === response) this.activeResponse = null;
    if (this.activeResume === response) this.activeResume = null;
    response.completion.settle();
  }
}

// ─── The shell: a mirror of src/core/session.ts ───────────────────────

type SendInput = M & { messageId?: string };

/** A working list that tells the shell of every change, as `PublishingChatState`'s `onChange` does. */
class NotifyingList implements WorkingList<M> {
  private working: M[] = [];
  onChange: (() => void) | null = null;

  get messages(): M[] {
    return this.working;
  }

  set messages(next: M[]) {
    this.working = next;
    this.onChange?.();
  }

  replaceMessage(index: number, message: M): void {
    this.working[index] = message;
    this.onChange?.();
  }

  pushMessage(message: M): void {
    this.working.push(message);
    this.onChange?.();
  }
}

/**
 * This client: the model under a mirror of `ChatSession`. Each method names
 * the session method it mirrors; where the session awaits, the mirror
 * continues in a microtask.
 */
export class SimClient {
  readonly list = new NotifyingList();
  readonly local = new Set<string>();
  readonly transport: SimTransport;
  readonly chat: SimChat;
  readonly model: ChatModel<M>;
  readonly tools: ToolActions<M>;
  readonly settings = defaultSettings<M>();
  readonly flags = { serverStreaming: false, recovering: false, toolContinuation: false };
  loading = false;
  private resumeOperation: Op | null = null;
  private continuationTimer: (() => void) | null = null;
  private lastStatus: ChatStatus = "ready";
  private reconcileQueued = false;
  /** The delta run the bridge holds back until the burst ends (`SocketBridge.deliver`). */
  private run: { frame: ResponseFrame; timer: () => void } | null = null;
  readonly warnings: string[] = [];

  constructor(
    private readonly world: WorldPort,
    options: WorldOptions
  ) {
    this.settings.resume = options.resume;
    this.settings.autoContinueAfterToolResult = options.autoContinue;
    this.transport = new SimTransport(world, this);
    this.chat = new SimChat(world, this);
    const ports: Ports<M> = {
      transport: this.transport as unknown as Ports<M>["transport"],
      settings: () => this.settings,
      status: () => this.chat.status,
      loading: () => this.loading,
      resuming: () => this.resumeOperation !== null,
      send: (frame) => void this.world.clientSend(frame),
      read: (always, attempt) => this.reread(always, attempt),
      requestSnapshot: () => {
        throw new WorldError("the simulated agent is not ordered: nothing asks it for a snapshot");
      },
      flags: ({ serverStreaming, recovering, toolContinuation }) => {
        if (serverStreaming !== undefined) this.flags.serverStreaming = serverStreaming;
        if (recovering !== undefined) this.flags.recovering = recovering;
        if (toolContinuation !== undefined) this.flags.toolContinuation = toolContinuation;
      },
      reconcile: () => this.scheduleReconcile(),
      warn: (key, message) => void this.warnings.push(`${key}: ${message}`),
      call: (_name, run) => run()
    };
    this.model = new ChatModel<M>(this.list, ports, this.local, () => world.newId("g"));
    this.list.onChange = () => this.onStateChange("messages");
    this.tools = new ToolActions<M>(this.model, {
      chat: this.chat as unknown as AbstractChat<M>,
      requestContinuation: () => this.requestContinuation(),
      resubmit: () => {
        throw new WorldError("the world never resubmits");
      },
      invalidate: () => {},
      publishRunning: () => {},
      disposed: () => false
    });
    this.loading = options.load;
  }

  /** `placedChatState`: the AI SDK's writes go through the placement. */
  place(message: M, index?: number): void {
    this.model.placement.place(message, index);
  }

  setList(next: M[]): void {
    this.list.messages = next;
  }

  get busy(): boolean {
    return this.model.busy;
  }

  // ── Socket events ──

  onSocketOpen(): void {
    // The world has no clock: every probe's grace (PROBE_GRACE_MS) is over when a send is queued.
    const edge = socketOpened(this.model, Number.NEGATIVE_INFINITY);
    if (edge === "first") {
      if (this.settings.resume) this.resumeStream();
      this.startFirstLoad();
    } else if (edge) {
      this.tryReconnectProbe();
      if (edge === "reconnect-and-read") this.reread(false);
    }
    this.scheduleReconcile();
  }

  /** The socket closed: the shell first, then the bridge ends the transport's streams. */
  onSocketClose(): void {
    const wasOpen = this.model.link.open;
    this.model.link.open = false;
    if (wasOpen) {
      socketClosed(this.model);
      this.scheduleReconcile();
    }
    this.flushRun();
    // A snapshot: a listener removes itself as it closes.
    for (const listener of Array.from(this.transport.listeners)) listener.close();
  }

  onSocketData(frame: ChatFrame<M>): void {
    if (frame.kind !== "response") return this.apply(frame);
    for (const admitted of this.model.streams.admit(frame, null)) this.apply(admitted.frame);
  }

  private apply(frame: ChatFrame<M>): void {
    const forward = frame.kind === "response" && this.local.has(frame.id);
    this.handleFrame(frame);
    if (!forward) return;
    const response = frame as ResponseFrame;
    const opened = response.continuation ? droppedTextStart(this.model, response) : undefined;
    if (opened) this.deliver({ ...opened, continuation: true });
    this.deliver(response);
  }

  private handleFrame(frame: ChatFrame<M>): void {
    const m = this.model;
    switch (frame.kind) {
      case "clear":
        return this.settleDropped(receivedClear(m, frame.version));
      case "recovering":
        return onRecovering(m, frame.recovering);
      case "messages":
        // `TranscriptReads.frame`: the connect-time transcript answers the first load.
        if (applySnapshot(m, frame.messages, frame.connect, frame.version)) this.loading = false;
        return;
      case "message-updated":
        return applyMessageUpdate(m, frame.message, frame.version);
      case "resume-none":
        return onResumeNone(m, frame.reason, frame.probeId);
      case "pending":
        return onPending(m, frame.id, frame.probeId);
      case "resuming":
        return onStreamResuming(m, frame.id, frame.probeId);
      case "response": {
        const readBack = onResponse(m, frame);
        return readBack === "none" ? undefined : this.reread(readBack === "always");
      }
    }
  }

  /** `SocketBridge.deliver`: consecutive live deltas of one part wait for the end of the burst. */
  private deliver(frame: ResponseFrame): void {
    if (this.transport.listeners.size === 0) return;
    const delta = !frame.replay && !frame.done && !frame.error && !frame.replayComplete && frame.body.includes('"type":"text-delta"');
    const run = this.run;
    if (delta && run && run.frame.id === frame.id && run.frame.continuation === frame.continuation && sameDeltaPart(run.frame, frame)) {
      const merged = JSON.parse(run.frame.body) as Chunk;
      merged.delta = `${String(merged.delta)}${String((JSON.parse(frame.body) as Chunk).delta)}`;
      run.frame = { ...run.frame, body: JSON.stringify(merged), seq: frame.seq ?? run.frame.seq };
      return;
    }
    this.flushRun();
    if (!delta) return this.forward(frame);
    this.run = { frame, timer: this.world.setTimer("delta run", () => this.flushRun()) };
  }

  private flushRun(): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    this.world.clearTimer(run.timer);
    this.forward(run.frame);
  }

  private forward(frame: ResponseFrame): void {
    for (const listener of Array.from(this.transport.listeners)) listener.frame(frame);
  }

  onStateChange(kind: "messages" | "status"): void {
    const streams = this.model?.streams;
    if (!streams) return;
    if (kind === "messages" && streams.rebuilt.size === 0 && streams.unsequenced.size === 0) {
      if (this.model.busy || this.flags.serverStreaming) return;
    }
    this.scheduleReconcile();
  }

  onTransportSend(frame: Record<string, unknown>): void {
    if (frame.type === CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST && typeof frame.id === "string") {
      this.model.intents.sendWentOut(frame.id, (frame.messages as M[]).findLast((message) => message.role === "user")?.id);
    }
    if (frame.type === CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK && typeof frame.id === "string") this.model.streams.transportAcked(frame.id);
  }

  // ── Resume and continuation ──

  resumeStream(): Op {
    if (this.resumeOperation) return this.resumeOperation;
    const operation = this.chat.resumeStream();
    this.resumeOperation = operation;
    operation.after(() => {
      if (this.resumeOperation !== operation) return;
      this.resumeOperation = null;
      this.tryReconnectProbe();
      this.scheduleReconcile();
    });
    return operation;
  }

  private tryReconnectProbe(): void {
    if (reconnectProbe(this.model, () => this.world.newId("idle")) === "resume") this.resumeStream();
  }

  private requestContinuation(): void {
    if (!this.settings.autoContinueAfterToolResult) return;
    this.model.continuation = requested(this.model.continuation);
    this.scheduleContinuationLaunch();
  }

  private scheduleContinuationLaunch(): void {
    if (this.model.continuation.kind !== "scheduled" || this.chat.status !== "ready" || this.continuationTimer) return;
    const timer = this.world.setTimer("continuation launch", () => this.launchContinuation(timer));
    this.continuationTimer = timer;
  }

  private launchContinuation(timer: () => void): void {
    // A resume may still own the AI SDK's active response.
    if (this.resumeOperation) return this.resumeOperation.after(() => this.launchContinuation(timer));
    if (this.continuationTimer === timer) this.continuationTimer = null;
    const c = this.model.continuation;
    if (c.kind !== "scheduled" || this.chat.status !== "ready") return;
    this.model.continuation = launched(c);
    this.model.placement.pinLast();
    this.transport.expectToolContinuation();
    this.resumeStream().after(() => {
      this.model.continuation = settled(this.model.continuation, c.token);
      this.scheduleReconcile();
    });
  }

  // ── Reads ──

  /** `TranscriptReads.startFirstLoad` (the world's agent is never remembered as pushing: the load reads at once). */
  private startFirstLoad(): void {
    if (!this.loading) return;
    const base = this.model.base;
    const read = (base.firstLoad = base.read(false));
    this.world.startRead(read, true);
  }

  firstReadAnswered(read: TranscriptRead, stored: M[] | null): void {
    if (this.model.base.firstLoad !== read) return;
    firstReadAnswered(this.model, read, stored);
    this.loading = false;
  }

  reread(always: boolean, attempt = 1): void {
    if (!always && !this.settings.resyncOnReconnect) return;
    const read = this.model.base.read(always, attempt);
    this.world.startRead(read, false);
  }

  // ── Requests ──

  prepareBody(request: { messages: M[]; trigger: "submit-message" | "regenerate-message"; messageId?: string }): void {

    this.model.intents.requestPrepared(request, this.model.base.known, this.list.messages);
    this.model.base.holdShells(request.messages);
  }

  sendMessage(message: SendInput): Op | undefined {
    if (message.messageId != null) return this.rewrite(() => this.chat.sendMessage(message), message.messageId);
    if (this.model.mustQueue()) return this.enqueue(message);
    const request = this.chat.sendMessage(message);
    if (this.chat.status === "streaming") this.model.placement.protectStreamingTail();
    return request;
  }

  private enqueue(message: M): undefined {
    this.world.microtask(() => {
      this.model.intents.queued.push({ message, options: undefined, settle: () => {} } as QueuedSend<M>);
      this.scheduleReconcile();
    });
    return undefined;
  }

  private flushOutbox(): void {
    if (this.model.probeHoldsQueue()) {
      this.transport.cancelPendingResume();
      return;
    }
    const intents = this.model.intents;
    const entry = this.model.nextQueued();
    if (!entry) return;
    intents.sending = true;
    this.chat.sendMessage(entry.message, false).after(() => {
      intents.sending = false;
      entry.settle();
      this.scheduleReconcile();
    });
  }

  private rewrite(run: () => Op, editedId?: string): Op {
    if (this.chat.activeResponse && !this.chat.activeResponse.ended) this.world.gap("rewrite-during-own-request");
    const rewrite = this.model.intents.beginRewrite(this.list.messages, editedId);
    const request = run();
    request.after(() => {
      if (this.model.intents.endRewrite(rewrite)) this.reread(true);
    });
    return request;
  }

  regenerate(): Op {
    return this.rewrite(() => this.chat.regenerate());
  }

  stop(): void {
    const m = this.model;
    const unattached = m.continuation.kind === "scheduled" || m.continuation.kind === "probing";
    m.streams.stopping(m.local);
    this.transport.cancelActiveServerTurn();
    this.chat.stop().after(() => {
      this.transport.abortActiveToolContinuation();
      if (unattached) {
        m.continuation = stoppedBeforeStart(m.continuation, this.world.newId("stop"));
        this.world.clientSend({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId: (m.continuation as { probeId: string }).probeId });
      } else if (isRunning(m.continuation)) m.continuation = { kind: "idle" };
    });
  }

  clearHistory(): void {
    const interrupted = [this.model.observed.streamId, this.transport.activeServerTurnId];
    const { dropped, read } = localClear(this.model, interrupted, true);
    this.settleDropped(dropped);
    if (read) this.reread(true);
  }

  setMessages(next: M[]): void {
    localReplace(this.model, next, this.settings.syncMessagesToServer);
    // `TranscriptReads.replaced`: a replacement before the first read left is the transcript.
    if (this.model.base.firstLoad === "waiting") {
      this.model.base.firstLoad = "done";
      this.loading = false;
    }
  }

  private settleDropped(dropped: Array<QueuedSend<M>>): void {
    for (const entry of dropped) {
      entry.settle();
      this.world.droppedByReset(entry.message.id);
    }
  }

  // ── Reconcile ──

  scheduleReconcile(): void {
    if (this.reconcileQueued) return;
    this.reconcileQueued = true;
    this.world.microtask(() => {
      this.reconcileQueued = false;
      this.reconcile();
    });
  }

  private reconcile(): void {
    const m = this.model;
    const status = this.chat.status;
    if (status !== this.lastStatus && (this.lastStatus = status) === "submitted") m.streams.heldTurn = m.streams.recoveringTurn = null;
    const settledChat = !m.busy;
    if (settledChat && m.streams.deferredEnds.length > 0) m.streams.deferredEnds = [];
    if (status === "error" && m.continuation.kind === "scheduled") m.continuation = { kind: "idle" };
    else this.scheduleContinuationLaunch();
    this.tryReconnectProbe();
    if (settledChat) {
      if (!m.observed.active) removeEmptyReplies(m);
      if (!this.flags.serverStreaming && !m.streams.holdsTools) this.tools.runPending();
      this.tools.resolveAutomatically();
      this.flushOutbox();
    }
    collapseReplays(m);
    if (settledChat) {
      m.tools.prune(this.list.messages);
      if (!this.resumeOperation && m.continuation.kind !== "scheduled") m.placement.pin = null;
    }
  }

  /** `onFinish` of the AI SDK chat. */
  onFinish(event: { message: M; messages: M[]; isAbort: boolean; isError: boolean; isDisconnect: boolean }): void {
    ownTurnFinished(this.model, event);
  }

  // ── What the invariants read ──

  get resumeRunning(): boolean {
    return this.resumeOperation !== null;
  }

  get timerPending(): boolean {
    return this.continuationTimer !== null || this.run !== null;
  }
}

function sameDeltaPart(a: ResponseFrame, b: ResponseFrame): boolean {
  return (JSON.parse(a.body) as Chunk).id === (JSON.parse(b.body) as Chunk).id;
}
