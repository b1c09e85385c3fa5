import { AbstractChat, type ChatRequestOptions, type ChatStatus, type UIMessage, generateId } from "ai";
import { PublishingChatState, placedChatState } from "./chat-state";
import { SocketBridge } from "./connection";
import { type ChatFrame, decodeSocketFrame } from "./frames";
import { ChatModel, type Effect, type View } from "./model";
import { isRunning, stoppedBeforeStart } from "./model/continuation";
import { collapseReplays, droppedTextStart, onResponse, ownTurnFinished, protectUnnamedReply } from "./model/response-rules";
import { cancelHandshake, onPending, onRecovering, onResumeNone, onStreamResuming, socketClosed, socketOpened } from "./model/resume-rules";
import { applyMessageUpdate, applySnapshot, localClear, localReplace, receivedClear, removeEmptyReplies, settleEndedReplies, showCached } from "./model/transcript-rules";
import { Outbox } from "./outbox";
import { Wire } from "./protocol";
import { requestBody } from "./requests";
import { TranscriptReads } from "./reads";
import { TurnTransport, probeIds } from "./turn-transport";
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
  readonly transport: TurnTransport<M>;
  /** An AI SDK resume runs. */
  readonly resuming: boolean;
}

/**
 * One conversation over one socket: the shell around the chat model. It wires the socket, its own transport
 * and the AI SDK chat to the rules in `model/`, runs what they decide (frames, reads, callbacks, timers), and
 * publishes into the cells the composable hands in.
 */
export class ChatSession<M extends UIMessage> {
  readonly chat: AbstractChat<M>;
  readonly #transport: TurnTransport<M>;
  readonly #model: ChatModel<M>;
  /** Tool outputs, approvals and client tool runs. */
  readonly tools: ToolActions<M>;
  readonly #bridge: SocketBridge;
  readonly #state: PublishingChatState<M>;
  readonly #config: SessionConfig<M>;
  readonly #reads: TranscriptReads<M>;
  #disposed = false;
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
    this.#bridge = new SocketBridge(config.socket, {
      message: (data) => this.#model.dispatch(() => this.#onSocketData(data)),
      open: () => this.#model.dispatch(() => this.#onSocketOpen()),
      close: (_event, interrupts) => this.#model.dispatch(() => this.#onSocketClose(interrupts))
    }, { connection: cells.connection, connectionError: cells.connectionError, label: config.label });
    this.#transport = new TurnTransport<M>({
      model: () => this.#model,
      state: this.#state,
      chat: () => this.chat,
      send: (data) => config.socket.send(data),
      prepareBody: (request) => this.#prepareBody(request),
      reconcile: () => this.#scheduleReconcile(),
      disposed: () => this.#disposed
    });
    this.#model = new ChatModel(this.#state, this.#view(), (effect) => this.#perform(effect), config.chatInit.generateId ?? generateId);
    this.#model.base.hold(config.initialMessages);
    const placement = this.#model.placement;
    this.chat = new (class extends AbstractChat<M> {})({
      ...config.chatInit,
      id: config.chatId,
      state: placedChatState(this.#state, (message, index) => placement.place(message, index) && protectUnnamedReply(this.#model, message)),
      transport: this.#transport,
      onData: (part) => this.#settings.onData?.(part),
      onError: (error) => {
        // The transport ends a request cut by a close with an error once the socket is down: the turn's end went unseen, not wrong.
        if (!this.#model.link.open) this.#model.turns.cutError = error;
        this.#settings.onError?.(error);
      },
      onFinish: (event) => {
        this.#model.dispatch(() => ownTurnFinished(this.#model, event));
        this.#settings.onFinish?.(event);
      }
    });
    this.tools = new ToolActions<M>(this.#model, {
      chat: this.chat,
      requestContinuation: () => this.#transport.requestContinuation(),
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
          this.#transport.forgetError();
          this.#model.dispatch(() => cancelHandshake(this.#model));
        },
        reconcile: () => this.#scheduleReconcile(),
        disposed: () => this.#disposed
      },
      (messages) => {
        if (!this.#disposed && Array.isArray(messages) && showCached(this.#model, messages)) this.#state.flush();
      }
    );
    this.#openedBeforeChat = this.#bridge.isOpen;
    if (this.#openedBeforeChat) this.#model.dispatch(() => this.#onSocketOpen());
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
        return session.#transport.resuming;
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

  /** What the rules read of the world. */
  #view(): View<M> {
    return {
      settings: () => this.#settings,
      status: () => this.#state.status,
      loading: () => this.#config.cells.loading.value,
      resuming: () => this.#transport.resuming,
      canRead: (always) => this.#reads.canRead(always)
    };
  }

  /** Performs what the rules ask for: the one place the model's decisions reach the world. */
  #perform(effect: Effect): void {
    if (this.#disposed) return;
    const cells = this.#config.cells;
    switch (effect.kind) {
      case "send":
        return this.#send(effect.frame);
      case "read":
        return this.#reads.start(effect.read);
      case "snapshot":
        return this.#send({ type: Wire.snapshotRequest, id: probeIds() });
      case "flags": {
        const { serverStreaming, recovering, toolContinuation, cached } = effect.flags;
        if (serverStreaming !== undefined) {
          // A terminal flag must never show before the final message does.
          if (!serverStreaming && cells.serverStreaming.value) this.#state.flush();
          cells.serverStreaming.value = serverStreaming;
        }
        if (recovering !== undefined) cells.recovering.value = recovering;
        if (cached !== undefined && cells.cached) cells.cached.value = cached;
        if (toolContinuation !== undefined) cells.toolContinuation.value = toolContinuation;
        return;
      }
      case "reconcile":
        return this.#scheduleReconcile();
      case "warn":
        return this.#warnLimited(effect.key, effect.message);
      case "call":
        return callUser(effect.name, effect.run);
      case "handshake":
        return this.#transport.answer(effect.answer);
      case "let-go-resumes":
        return this.#transport.letGo();
    }
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
    } else if (edge) this.#transport.probeAfterReconnect();
    this.#reads.afterOpen(edge === "reconnect-and-read");
    this.#scheduleReconcile();
  }

  #onSocketClose(interrupts: boolean): void {
    if (this.#disposed) return;
    const wasOpen = this.#model.link.open;
    this.#model.link.open = false;
    if (this.#bridge.finalClose) this.#outbox.closedForGood(this.#warnLimited);
    if (wasOpen) {
      socketClosed(this.#model);
      this.#scheduleReconcile();
    }
    // A failed connection attempt does not end a request still waiting in the socket's buffer: it goes out when the socket opens.
    if (interrupts) this.#transport.closed();
  }

  /** A frame arrived; true when it was a chat response frame. */
  #onSocketData(data: unknown): boolean {
    if (this.#disposed) return false;
    const frame = decodeSocketFrame<M>(data, this.#settings.onFrame, (key, message) => this.#warnLimited(key, message));
    if (frame?.kind !== "messages") this.#reads.frame(frame);
    if (frame?.kind !== "response") {
      if (frame) this.#apply(frame);
      return false;
    }
    for (const admitted of this.#model.turns.admit(frame)) this.#apply(admitted);
    return true;
  }

  #apply(frame: ChatFrame<M>): void {
    // The transport renders only its requests' frames (checked before handling: a terminal frame releases the id).
    const forward = frame.kind === "response" && this.#model.turns.isLocal(frame.id);
    const superseded = forward && frame.error && this.#model.turns.isSuperseded(frame.id);
    try {
      this.#handleFrame(frame);
    } catch (error) {
      console.error("[agents-vue] Failed to apply a chat frame:", error); // A frame must never take the chat down.
    }
    if (!forward || frame.kind !== "response") return;
    // Rule (a superseded request's failure is not the chat's): the AI SDK follows the later request; this one's stream just ends.
    if (superseded) return this.#transport.endQuietly(frame.id);
    const opened = frame.continuation ? droppedTextStart(this.#model, frame) : undefined;
    if (opened !== undefined) this.#transport.enqueue(frame.id, { type: "text-start", id: opened });
    this.#transport.deliver(frame);
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
        if (frame.reason === "idle" && frame.probeId !== undefined && m.turns.foundIdle() && !m.base.exact) m.read(false);
        return;
      case "pending":
        return onPending(m, frame.id, frame.probeId);
      case "resuming":
        return onStreamResuming(m, frame.id, frame.probeId);
      case "response": {
        const followed = m.turns.isRunning(frame.id);
        const readBack = onResponse(m, frame);
        if (m.turns.cutTurnEnded(frame, followed) && this.#state.status === "error") {
          // The reply shows before the status says it is over.
          this.#state.flush();
          this.clearError();
        }
        if (readBack !== "none") m.read(readBack === "always");
        return;
      }
    }
  }

  /**
   * Effects follow state changes. While a reply streams, a message change alone cannot make any of them fire
   * (they wait for the turn to settle), so per-chunk writes skip the pass unless a replayed reply needs collapsing.
   */
  #onStateChange(kind: "messages" | "status"): void {
    const turns = this.#model?.turns;
    if (!turns) return;
    const perChunk = kind === "messages" && turns.rebuilt.size === 0 && turns.unsequenced.size === 0;
    if (!perChunk || !(this.#model.busy || this.#config.cells.serverStreaming.value)) this.#scheduleReconcile();
  }

  // ─── Resume and continuation ──────────────────────────────────────

  /** Rule (one resume at a time, #1837): every caller shares the running AI SDK resume. */
  resumeStream(options?: ChatRequestOptions): Promise<void> {
    return this.#transport.resume(options);
  }

  // ─── Requests ─────────────────────────────────────────────────────

  async #prepareBody(request: { messages: M[]; trigger: "submit-message" | "regenerate-message"; messageId?: string }) {
    const settings = this.#settings;
    const { base, intents } = this.#model;
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
      if (m.intents.endRewrite(rewrite, m.base.clock)) m.dispatch(() => m.read(true));
    };
    void request.then(release, release);
    return request;
  }

  /** Clears the error and returns to `ready`; a resume still running no longer puts the error back. */
  clearError(): void {
    this.#transport.forgetError();
    this.chat.clearError();
  }

  /** Regenerates an assistant message (full transcript, `regenerate-message`). */
  regenerate(options?: Parameters<AbstractChat<M>["regenerate"]>[0]): Promise<void> {
    return this.#rewrite(() => this.chat.regenerate(options));
  }

  /** Stops the local stream and cancels the server turn it follows, whatever `cancelOnClientAbort` says. */
  async stop(): Promise<void> {
    const m = this.#model;
    const unattached = m.continuation.kind === "scheduled" || m.continuation.kind === "probing";
    m.turns.stopping(m.turns.local);
    try {
      this.#transport.cancelActiveServerTurn();
      // Rule (a stopped probe waits no more): the AI SDK's stop() waits for a resume that waits for the server's answer (issue 46).
      m.dispatch(() => cancelHandshake(m));
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
    const m = this.#model;
    m.dispatch(() => {
      const { dropped, read } = localClear(m, [m.observed.streamId, m.turns.active], !!this.#config.readStored);
      this.#afterClear(dropped);
      if (read) m.read(true);
    });
  }

  /** Replaces the transcript and, unless `syncMessagesToServer` is off, the server's copy. */
  setMessages(next: M[] | ((current: M[]) => M[])): void {
    const resolved = typeof next === "function" ? next([...this.#state.messages]) : next;
    if (!Array.isArray(resolved)) {
      if (process.env.NODE_ENV !== "production") console.warn("[agents-vue] setMessages needs an array of messages; nothing changed.");
      return;
    }
    this.#model.dispatch(() => localReplace(this.#model, resolved, this.#settings.syncMessagesToServer));
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
      if (!this.#disposed) this.#model.dispatch(() => this.#reconcile());
    });
  }

  #reconcile(): void {
    const m = this.#model;
    const status = this.#state.status;
    // Server turns are serialized: our own request now gates tool calls.
    if (status !== this.#lastStatus && (this.#lastStatus = status) === "submitted") m.turns.heldTurn = m.turns.recoveringTurn = null;
    const settledChat = !m.busy;
    if (settledChat && m.turns.deferredEnds.length > 0) {
      const events = m.turns.deferredEnds;
      m.turns.deferredEnds = [];
      for (const event of events) callUser("onTurnEnd", () => this.#settings.onTurnEnd?.(event));
    }
    if (status === "error" && m.continuation.kind === "scheduled") m.continuation = { kind: "idle" };
    else this.#transport.launchContinuation();
    this.#transport.probeAfterReconnect();
    if (settledChat) {
      if (!m.observed.active) {
        removeEmptyReplies(m);
        settleEndedReplies(m);
      }
      if (!this.#config.cells.serverStreaming.value && !m.turns.holdsTools) this.tools.runPending();
      this.tools.resolveAutomatically();
      this.#outbox.flush();
    }
    collapseReplays(m);
    // Rule (a cut is not a failure), without resume (with it, the resume decides): once the reopened socket
    // settled what the close cut off (the idle probe answered, the turn it found followed to its end), the close's error goes.
    const cut = status === "error" && m.turns.isCut(this.#state.error);
    if (cut && !this.#settings.resume && m.link.open && !this.#transport.resuming) {
      if (!m.probes.idleNeeded && m.probes.idleId === null && !m.observed.active) {
        m.turns.cutError = undefined;
        this.chat.clearError();
      }
    }
    if (settledChat) {
      m.tools.prune(this.#state.messages);
      if (!this.#transport.resuming && m.continuation.kind !== "scheduled") m.placement.pin = null;
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
    const activeTurn = this.#model.turns.active;
    if (cancelOnClientAbort) {
      // A local abort cancels the turn this client follows as its own (request, resumed stream, tool continuation; issue 22, 2), before an owned socket closes.
      const c = this.#model.continuation;
      const own = activeTurn !== null && (this.#model.turns.isLocal(activeTurn) || (c.kind === "observed" && c.requestId === activeTurn));
      if (own) this.#transport.cancelActiveServerTurn();
      else this.#transport.abortActiveToolContinuation();
    }
    // With `persist` queued sends stay stored: the next page of this conversation, or another tab, sends them.
    const unsent = this.#outbox.dispose();
    this.#disposed = true;
    void this.chat.stop().catch(() => {});
    this.#model.handshake = null;
    this.#transport.dispose();
    this.#reads.dispose();
    this.#state.dispose();
    this.#bridge.dispose();
    for (const entry of unsent) entry.settle();
    if (this.#config.ownsSocket) this.#config.socket.close?.();
  }
}
