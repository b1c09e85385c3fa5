import { AbstractChat, type ChatRequestOptions, type ChatStatus, type UIMessage, generateId } from "ai";
import { WebSocketChatTransport } from "agents/chat/transport";
import { PublishingChatState, placedChatState } from "./chat-state";
import { SocketBridge } from "./connection";
import { CutTurns } from "./cut-turns";
import { type ChatFrame, decodeSocketFrame, parseJson, sentRequest } from "./frames";
import { ChatModel, type Ports } from "./model";
import { isRunning, stoppedBeforeStart } from "./model/continuation";
import { collapseReplays, droppedTextStart, onResponse, ownTurnFinished, protectUnnamedReply, requestWentOut } from "./model/response-rules";
import { onPending, onRecovering, onResumeNone, onStreamResuming, socketClosed, socketOpened } from "./model/resume-rules";
import { applyMessageUpdate, applySnapshot, localClear, localReplace, receivedClear, removeEmptyReplies, settleEndedReplies, showCached } from "./model/transcript-rules";
import { Outbox } from "./outbox";
import { Wire } from "./protocol";
import { requestBody } from "./requests";
import { Resumes, probeIds } from "./resumes";
import { TranscriptReads } from "./reads";
import type { SessionConfig, SessionSettings } from "./settings";
import { ToolActions } from "./tool-actions";
import { errorText } from "./tools";
import { callUser, limitedWarner } from "./diagnostics";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

export type * from "./settings";
export { warnDeprecated } from "./diagnostics";

type SendInput<M extends UIMessage> = Parameters<AbstractChat<M>["sendMessage"]>[0];

/** What `ChatSession.inspect` shows of a session (internal, for tests). */
export interface SessionInternals<M extends UIMessage> {
  readonly model: ChatModel<M>;
  readonly transport: WebSocketChatTransport<M>;
  /** An AI SDK resume runs. */
  readonly resuming: boolean;
}

/**
 * One conversation over one socket: the shell around the chat model. It wires the socket, upstream's transport
 * and the AI SDK chat to the rules in `model/`, runs what they decide (frames, reads, callbacks, timers), and
 * publishes into the cells the composable hands in.
 */
export class ChatSession<M extends UIMessage> {
  readonly chat: AbstractChat<M>;
  readonly #transport: WebSocketChatTransport<M>;
  readonly #model: ChatModel<M>;
  /** Tool outputs, approvals and client tool runs. */
  readonly tools: ToolActions<M>;
  readonly #bridge: SocketBridge;
  readonly #state: PublishingChatState<M>;
  readonly #config: SessionConfig<M>;
  readonly #reads: TranscriptReads<M>;
  #disposed = false;
  /** The AI SDK resumes: the reconnect probe, `resumeStream()`, the tool continuation. */
  readonly #resumes: Resumes<M>;
  /** Requests a socket close cut off, and the error it gave them (rule: a cut is not a failure). */
  readonly #cuts = new CutTurns();
  #lastStatus: ChatStatus = "ready";
  #reconcileQueued = false;
  /** A shared socket that was open when the chat started: its connect-time frames went by before the chat listened. */
  #openedBeforeChat = false;
  readonly #warnLimited = limitedWarner();
  /** Queued sends, and the conversation's durable copy (`persist`). */
  readonly #outbox: Outbox<M>;

  constructor(config: SessionConfig<M>) {
    this.#config = config;
    const cells = config.cells;
    this.#state = new PublishingChatState<M>({
      initialMessages: [...config.initialMessages],
      messages: cells.messages,
      status: cells.status,
      error: cells.error,
      throttleMs: config.throttleMs,
      decorate: (message) => this.#model?.tools.withResults(message) ?? message,
      onChange: (kind) => this.#onStateChange(kind),
      queued: cells.sdkQueued
    });
    const local = new Set<string>();
    this.#bridge = new SocketBridge(config.socket, {
      message: (data) => this.#onSocketData(data),
      open: () => this.#onSocketOpen(),
      close: () => this.#onSocketClose(),
      transportSend: (data) => this.#onTransportSend(data)
    }, { connection: cells.connection, connectionError: cells.connectionError, label: config.label });
    this.#transport = new WebSocketChatTransport<M>({
      agent: this.#bridge.transportView,
      activeRequestIds: local,
      cancelOnClientAbort: this.#settings.cancelOnClientAbort,
      onRequestBuffered: (messageId) => messageId && this.#model.intents.buffered.add(messageId),
      prepareBody: (request) => this.#prepareBody(request)
    });
    this.#model = new ChatModel(this.#state, this.#ports(), local, config.chatInit.generateId ?? generateId);
    this.#model.base.hold(config.initialMessages);
    this.#resumes = new Resumes<M>({
      model: this.#model,
      state: this.#state,
      chat: () => this.chat,
      cuts: this.#cuts,
      settings: () => this.#settings,
      expectContinuation: () => this.#transport.expectToolContinuation(),
      reconcile: () => this.#scheduleReconcile(),
      disposed: () => this.#disposed
    });
    const placement = this.#model.placement;
    this.chat = new (class extends AbstractChat<M> {})({
      ...config.chatInit,
      id: config.chatId,
      state: placedChatState(this.#state, (message, index) => placement.place(message, index) && protectUnnamedReply(this.#model, message)),
      transport: this.#transport,
      onData: (part) => this.#settings.onData?.(part),
      onError: (error) => {
        // The transport ends a request cut by a close with an error once the socket is down: the turn's end went unseen, not wrong.
        this.#cuts.errored(error, this.#model.link.open);
        this.#settings.onError?.(error);
      },
      onFinish: (event) => {
        ownTurnFinished(this.#model, event);
        this.#settings.onFinish?.(event);
      }
    });
    this.tools = new ToolActions<M>(this.#model, {
      chat: this.chat,
      requestContinuation: () => this.#resumes.requestContinuation(),
      resubmit: () => void this.sendMessage(),
      invalidate: (id) => this.#state.invalidate((message) => message.parts.some((part) => (part as { toolCallId?: string }).toolCallId === id)),
      publishRunning: (running) => (cells.runningToolCalls.value = running),
      disposed: () => this.#disposed
    });
    cells.serverStreaming.value = cells.recovering.value = cells.toolContinuation.value = false;
    [cells.runningToolCalls.value, cells.queued.value] = [new Set(), []];
    this.#reads = new TranscriptReads(config, this.#model, this.#state, () => this.#disposed);
    if (cells.cached) cells.cached.value = false;
    this.#outbox = new Outbox<M>(
      {
        config,
        model: this.#model,
        state: this.#state,
        chat: () => this.chat,
        endProbeHold: () => {
          this.#resumes.forgetError();
          console.log("DBG cancel", this.#transport.isAwaitingResume(), this.#transport.cancelPendingResume(), this.#transport.isAwaitingResume());
        },
        reconcile: () => this.#scheduleReconcile(),
        disposed: () => this.#disposed
      },
      (messages) => {
        if (!this.#disposed && Array.isArray(messages) && showCached(this.#model, messages)) this.#state.flush();
      }
    );
    this.#openedBeforeChat = this.#bridge.isOpen;
    if (this.#openedBeforeChat) this.#onSocketOpen();
  }

  /**
   * The rules' state behind a session, for the model's simulation test (`test/support/model-world.ts`), which holds
   * it to its invariants at quiescence. Internal: read it, never write it.
   */
  static inspect<M extends UIMessage>(session: ChatSession<M>): SessionInternals<M> {
    return {
      model: session.#model,
      transport: session.#transport,
      get resuming() {
        return session.#resumes.running;
      }
    };
  }

  get #settings(): SessionSettings<M> {
    return this.#config.settings();
  }

  /** Resolves once the first transcript is in (or was given). */
  get ready(): Promise<void> {
    return this.#reads.ready;
  }

  /** What the rules may ask of the world. */
  #ports(): Ports<M> {
    const cells = this.#config.cells;
    return {
      transport: this.#transport,
      settings: () => this.#settings,
      status: () => this.#state.status,
      loading: () => cells.loading.value,
      resuming: () => this.#resumes.running,
      send: (frame) => this.#send(frame),
      read: (always, attempt) => this.#reads.reread(always, attempt),
      requestSnapshot: () => this.#send({ type: Wire.snapshotRequest, id: probeIds() }),
      flags: ({ serverStreaming, recovering, toolContinuation, cached }) => {
        if (serverStreaming !== undefined) {
          // A terminal flag must never show before the final message does.
          if (!serverStreaming && cells.serverStreaming.value) this.#state.flush();
          cells.serverStreaming.value = serverStreaming;
        }
        if (recovering !== undefined) cells.recovering.value = recovering;
        if (cached !== undefined && cells.cached) cells.cached.value = cached;
        if (toolContinuation !== undefined) cells.toolContinuation.value = toolContinuation;
      },
      reconcile: () => this.#scheduleReconcile(),
      warn: (key, message) => this.#warnLimited(key, message),
      call: callUser
    };
  }

  // ─── Socket events ────────────────────────────────────────────────

  #onSocketOpen(): void {
    if (this.#disposed) return;
    this.#outbox.store?.opened();
    this.#reads.opened();
    const edge = socketOpened(this.#model, Date.now());
    if (edge === "first") {
      // Probe first, then read: a turn still running is offered on this socket; one that ended before it opened is already stored.
      if (this.#settings.resume) void this.resumeStream().catch(() => {});
      this.#reads.firstOpen(this.#openedBeforeChat);
    } else if (edge) this.#resumes.probeAfterReconnect();
    this.#reads.afterOpen(edge === "reconnect-and-read");
    this.#scheduleReconcile();
  }

  #onSocketClose(): void {
    if (this.#disposed) return;
    const wasOpen = this.#model.link.open;
    this.#model.link.open = false;
    if (this.#bridge.finalClose) this.#outbox.closedForGood(this.#warnLimited);
    if (!wasOpen) return;
    this.#cuts.closed(this.#model.local);
    socketClosed(this.#model);
    this.#scheduleReconcile();
  }

  /** A frame arrived; true when it was a chat response frame. */
  #onSocketData(data: unknown): boolean {
    if (this.#disposed) return false;
    const frame = decodeSocketFrame<M>(data, this.#settings.onFrame, (key, message) => this.#warnLimited(key, message));
    if (frame?.kind !== "messages") this.#reads.frame(frame);
    if (frame?.kind !== "response") {
      if (frame) this.#apply(frame, data as string);
      return false;
    }
    for (const admitted of this.#model.streams.admit(frame, data as string)) this.#apply(admitted.frame, admitted.raw);
    return true;
  }

  #apply(frame: ChatFrame<M>, data: string): void {
    // Only the transport's own streams read response frames, and only their requests' (checked before handling: a terminal frame releases the id).
    const forward = frame.kind === "response" && this.#model.local.has(frame.id);
    const superseded = forward && frame.error && this.#model.streams.get(frame.id)?.superseded === true;
    try {
      this.#handleFrame(frame);
    } catch (error) {
      console.error("[agents-vue] Failed to apply a chat frame:", error); // A frame must never take the chat down.
    }
    if (!forward || frame.kind !== "response") return;
    // Rule (a superseded request's failure is not the chat's): the AI SDK follows the later request; this one's stream just ends.
    if (superseded) return this.#bridge.deliver({ ...frame, body: "", error: false, done: true }, JSON.stringify({ type: Wire.chatResponse, id: frame.id, body: "", done: true }));
    const opened = frame.continuation ? droppedTextStart(this.#model, frame) : undefined;
    if (opened) this.#bridge.deliver(opened, JSON.stringify({ type: Wire.chatResponse, id: opened.id, body: opened.body, done: false, continuation: true }));
    this.#bridge.deliver(frame, data);
  }

  #handleFrame(frame: ChatFrame<M>): void {
    const m = this.#model;
    switch (frame.kind) {
      case "clear":
        return this.#afterClear(receivedClear(m, frame.version));
      case "recovering":
        return onRecovering(m, frame.recovering);
      case "messages":
        return this.#reads.frame(frame, applySnapshot(m, frame.messages, frame.connect, frame.version));
      case "message-updated":
        return applyMessageUpdate(m, frame.message, frame.version);
      case "resume-none":
        onResumeNone(m, frame.reason, frame.probeId);
        if (frame.reason === "idle" && frame.probeId !== undefined && this.#cuts.foundIdle() && !m.base.exact) this.#reads.reread(false);
        return;
      case "pending":
        return onPending(m, frame.id, frame.probeId);
      case "resuming":
        return onStreamResuming(m, frame.id, frame.probeId);
      case "response": {
        const followed = m.local.has(frame.id);
        const readBack = onResponse(m, frame);
        if (this.#cuts.ended(frame, followed) && this.#state.status === "error") {
          // The reply shows before the status says it is over.
          this.#state.flush();
          this.clearError();
        }
        if (readBack !== "none") this.#reads.reread(readBack === "always");
        return;
      }
    }
  }

  /**
   * Effects follow state changes. While a reply streams, a message change alone cannot make any of them fire
   * (they wait for the turn to settle), so per-chunk writes skip the pass unless a replayed reply needs collapsing.
   */
  #onStateChange(kind: "messages" | "status"): void {
    const streams = this.#model?.streams;
    if (!streams) return;
    const perChunk = kind === "messages" && streams.rebuilt.size === 0 && streams.unsequenced.size === 0;
    if (!perChunk || !(this.#model.busy || this.#config.cells.serverStreaming.value)) this.#scheduleReconcile();
  }

  /** The transport sends a request (rule: a send retires with its request) or ACKs a stream: its replay starts from chunk 0 again. */
  #onTransportSend(data: string): void {
    const frame = parseJson(data) as { id?: unknown } | undefined;
    const request = sentRequest(frame);
    if (request) return requestWentOut(this.#model, request.id, request.sentId);
    if (!data.includes(Wire.streamResumeAck) || typeof frame?.id !== "string") return;
    this.#resumes.forgetError();
    this.#model.streams.transportAcked(frame.id);
  }

  // ─── Resume and continuation ──────────────────────────────────────

  /** Rule (one resume at a time, #1837): every caller shares the running AI SDK resume. */
  resumeStream(options?: ChatRequestOptions): Promise<void> {
    return this.#resumes.resume(options);
  }

  // ─── Requests ─────────────────────────────────────────────────────

  async #prepareBody(request: { messages: M[]; trigger: "submit-message" | "regenerate-message"; messageId?: string }) {
    const settings = this.#settings;
    const { base, intents } = this.#model;
    this.#transport.setCancelOnClientAbort(settings.cancelOnClientAbort);
    const body = await requestBody(settings, request, this.#config.partyKey(), base.known);
    intents.requestPrepared(request, base.known, this.#state.messages);
    base.holdShells(request.messages);
    return body;
  }

  /** Sends a message, or queues it (see `ChatModel.mustQueue`); an edit is a rewrite. */
  sendMessage(message?: SendInput<M>, options?: ChatRequestOptions): Promise<void> {
    const editedId = (message as { messageId?: unknown } | undefined)?.messageId;
    if (editedId != null) return this.#rewrite(() => this.chat.sendMessage(message, options), String(editedId));
    if (message !== undefined && this.#model.mustQueue()) return this.#outbox.enqueue(message, options);
    const request = this.chat.sendMessage(message, options);
    if (message !== undefined && this.#state.status === "streaming") this.#model.placement.protectStreamingTail();
    return request;
  }

  /** Runs a regenerate or an edit, holding back what it removes from stale broadcasts until it settles. */
  #rewrite(run: () => Promise<void>, editedId?: string): Promise<void> {
    // Exact sync: every version reaches this socket in order, so nothing stale needs holding back.
    if (this.#model.base.exact) return run();
    const m = this.#model;
    const rewrite = m.intents.beginRewrite(this.#state.messages, editedId, m.base.serverOwned ? null : m.base.clock);
    const request = run();
    const release = () => {
      if (m.intents.endRewrite(rewrite, m.base.clock)) this.#reads.reread(true);
    };
    void request.then(release, release);
    return request;
  }

  /** Clears the error and returns to `ready`; a resume still running no longer puts the error back. */
  clearError(): void {
    this.#resumes.forgetError();
    this.chat.clearError();
  }

  /** Regenerates an assistant message (full transcript, `regenerate-message`). */
  regenerate(options?: Parameters<AbstractChat<M>["regenerate"]>[0]): Promise<void> {
    return this.#rewrite(() => this.chat.regenerate(options));
  }

  /** Stops the local stream and cancels the server turn it follows, whatever `cancelOnClientAbort` says. */
  async stop(): Promise<void> {
    const m = this.#model;
    this.#transport.setCancelOnClientAbort(this.#settings.cancelOnClientAbort);
    const unattached = m.continuation.kind === "scheduled" || m.continuation.kind === "probing";
    m.streams.stopping(m.local);
    try {
      this.#transport.cancelActiveServerTurn();
      // Rule (a stopped probe waits no more): the transport ignores a resume's abort, and chat.stop() waits for it (issue 46).
      this.#transport.cancelPendingResume();
      await this.chat.stop();
    } finally {
      this.#transport.abortActiveToolContinuation();
      // The continuation is over once stop() returns (its stream settles a tick later).
      if (unattached) {
        m.continuation = stoppedBeforeStart(m.continuation, probeIds());
        this.#send({ type: Wire.streamResumeRequest, probeId: (m.continuation as { probeId: string }).probeId });
      } else if (isRunning(m.continuation)) m.continuation = { kind: "idle" };
    }
  }

  /**
   * The AI SDK's `experimental_sendQueuedMessageNow`, stopped as `stop()`
   * stops: a request of this tab's in progress is cancelled on the server
   * too, so the queued message is not left waiting behind it there.
   */
  async sendQueuedNow(id: string): Promise<void> {
    if (!this.chat.experimental_queuedMessages.some((message) => message.id === id)) return;
    const status = this.#state.status;
    if (status === "submitted" || status === "streaming") await this.stop();
    await this.chat.experimental_sendQueuedMessageNow(id);
  }

  /** Clears the transcript here and on the server (see `localClear`). */
  clearHistory(): void {
    const interrupted = [this.#model.observed.streamId, this.#transport.activeServerTurnId];
    const { dropped, read } = localClear(this.#model, interrupted, !!this.#config.readStored);
    this.#afterClear(dropped);
    if (read) this.#reads.reread(true);
  }

  /** Replaces the transcript and, unless `syncMessagesToServer` is off, the server's copy. */
  setMessages(next: M[] | ((current: M[]) => M[])): void {
    const resolved = typeof next === "function" ? next([...this.#state.messages]) : next;
    if (!Array.isArray(resolved)) {
      if (process.env.NODE_ENV !== "production") console.warn("[agents-vue] setMessages needs an array of messages; nothing changed.");
      return;
    }
    localReplace(this.#model, resolved, this.#settings.syncMessagesToServer);
    this.#reads.replaced();
  }

  /** A clear: the sends it dropped settle unsent (see `Outbox.cleared`); running tool calls are forgotten. */
  #afterClear(dropped: Parameters<Outbox<M>["cleared"]>[0]): void {
    this.#config.cells.runningToolCalls.value = new Set();
    this.#outbox.cleared(dropped);
  }

  // ─── Reconcile (what React runs as effects) ───────────────────────

  #scheduleReconcile(): void {
    if (this.#reconcileQueued || this.#disposed) return;
    this.#reconcileQueued = true;
    queueMicrotask(() => {
      this.#reconcileQueued = false;
      if (!this.#disposed) this.#reconcile();
    });
  }

  #reconcile(): void {
    const m = this.#model;
    const status = this.#state.status;
    // Server turns are serialized: our own request now gates tool calls.
    if (status !== this.#lastStatus && (this.#lastStatus = status) === "submitted") m.streams.heldTurn = m.streams.recoveringTurn = null;
    const settledChat = !m.busy;
    if (settledChat && m.streams.deferredEnds.length > 0) {
      const events = m.streams.deferredEnds;
      m.streams.deferredEnds = [];
      for (const event of events) callUser("onTurnEnd", () => this.#settings.onTurnEnd?.(event));
    }
    if (status === "error" && m.continuation.kind === "scheduled") m.continuation = { kind: "idle" };
    else this.#resumes.launchContinuation();
    this.#resumes.probeAfterReconnect();
    if (settledChat) {
      if (!m.observed.active) {
        removeEmptyReplies(m);
        settleEndedReplies(m);
      }
      if (!this.#config.cells.serverStreaming.value && !m.streams.holdsTools) this.tools.runPending();
      this.tools.resolveAutomatically();
      this.#outbox.flush();
    }
    collapseReplays(m);
    // Rule (a cut is not a failure), without resume (with it, the resume decides): once the reopened socket
    // settled what the close cut off (the idle probe answered, the turn it found followed to its end), the close's error goes.
    const cut = status === "error" && this.#cuts.isCut(this.#state.error);
    if (cut && !this.#settings.resume && m.link.open && !this.#resumes.running) {
      if (!m.probes.idleNeeded && m.probes.idleId === null && !m.observed.active) {
        this.#cuts.forget();
        this.chat.clearError();
      }
    }
    if (settledChat) {
      m.tools.prune(this.#state.messages);
      if (!this.#resumes.running && m.continuation.kind !== "scheduled") m.placement.pin = null;
      // What the server's transcript says, once it is in and no reply streams: the copy the next page starts from.
      if (!m.cached && !this.#config.cells.loading.value && !this.#config.cells.serverStreaming.value) this.#outbox.store?.transcript([...this.#state.messages]);
    }
  }

  #send(frame: Record<string, unknown>): void {
    try {
      this.#config.socket.send(JSON.stringify(frame));
    } catch (error) {
      console.warn(`[agents-vue] Could not send ${String(frame.type)}:`, errorText(error));
    }
  }

  /** Ends the session: listeners and timers go, local streams stop (the server turn runs on unless `cancelOnClientAbort`), an owned socket closes. */
  dispose(): void {
    if (this.#disposed) return;
    const { cancelOnClientAbort } = this.#settings;
    const activeTurn = this.#transport.activeServerTurnId;
    if (cancelOnClientAbort) {
      // A local abort cancels the turn this client follows as its own (request, resumed stream, tool continuation; issue 22, 2), before an owned socket closes.
      const c = this.#model.continuation;
      const own = activeTurn !== null && (this.#model.local.has(activeTurn) || (c.kind === "observed" && c.requestId === activeTurn));
      if (own) this.#transport.cancelActiveServerTurn();
      else this.#transport.abortActiveToolContinuation();
    }
    // With `persist` queued sends stay stored: the next page of this conversation, or another tab, sends them.
    const unsent = this.#outbox.dispose();
    this.#disposed = true;
    this.#transport.setCancelOnClientAbort(cancelOnClientAbort);
    void this.chat.stop().catch(() => {});
    this.#transport.resetResumeState();
    this.#resumes.dispose();
    this.#reads.dispose();
    this.#state.dispose();
    this.#bridge.dispose();
    for (const entry of unsent) entry.settle();
    if (this.#config.ownsSocket) this.#config.socket.close?.();
  }
}
