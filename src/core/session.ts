import {
  AbstractChat,
  type ChatInit,
  type ChatRequestOptions,
  type ChatState,
  type ChatStatus,
  type CreateUIMessage,
  type FileUIPart,
  type UIMessage,
  convertFileListToFileUIParts,
  createIdGenerator,
  generateId,
  getToolName,
  isToolUIPart
} from "ai";
import { WebSocketChatTransport } from "agents/chat/transport";
import { type Cell, PublishingChatState } from "./chat-state";
import { type AgentSocket, type CloseInfo, SocketBridge, connectionFailure } from "./connection";
import { type ChatFrame, type ResponseFrame, isRecord, parseJson, readFrame } from "./frames";
import { ObservedMessage } from "./message-builder";
import { type ChatTurnEndEvent, Wire } from "./protocol";
import { type AITool, errorText, extractClientToolSchemas, pendingToolParts } from "./tools";
import {
  collapseReplayedText,
  moveToEnd,
  prependMissing,
  restoreBuffered,
  trimForServer
} from "./transcript";

/** Connection lifecycle as the UI sees it. */
export type ConnectionStatus = "connecting" | "open" | "closed";

/** Options for adding a tool output. */
export interface AddToolOutputOptions {
  /** The tool call to answer. */
  toolCallId: string;
  /** The tool's name; looked up from the tool part when omitted. */
  toolName?: string;
  /** The tool's output. */
  output?: unknown;
  /** `"output-error"` reports a failure (or a denial) instead of an output. */
  state?: "output-available" | "output-error";
  /** The error text when `state` is `"output-error"`. */
  errorText?: string;
}

/** The callback that answers client-side tool calls without `execute`. */
export type OnToolCallCallback = (options: {
  /** The call waiting for an answer. */
  toolCall: { toolCallId: string; toolName: string; input: unknown };
  /** Answers this call (or reports an error with `state: "output-error"`). */
  addToolOutput: (options: Omit<AddToolOutputOptions, "toolName">) => void;
}) => void | Promise<void>;

/** What `prepareSendMessagesRequest` receives. */
export interface PrepareSendMessagesRequestOptions<M extends UIMessage = UIMessage> {
  /** The socket's party key (`_pk`), as upstream passes it. */
  id: string;
  /** The full transcript the request is made from. */
  messages: M[];
  /** What made the request. */
  trigger: "submit-message" | "regenerate-message";
  /** The message an edit or resubmission rewrites. */
  messageId?: string;
}

/** What `prepareSendMessagesRequest` may return; only `body` is sent over the socket. */
export interface PrepareSendMessagesRequestResult {
  /** Extra fields merged into the request body (they override `body`). */
  body?: Record<string, unknown>;
  /** Ignored on a WebSocket (accepted for upstream compatibility). */
  headers?: HeadersInit;
  /** Ignored on a WebSocket (accepted for upstream compatibility). */
  credentials?: RequestCredentials;
  /** Ignored on a WebSocket (accepted for upstream compatibility). */
  api?: string;
}

/** A request body source: an object, or a function read at send time. */
export type BodySource =
  | Record<string, unknown>
  | (() => Record<string, unknown> | Promise<Record<string, unknown>>);

/** The options a session reads whenever it needs them (so they can change). */
export interface SessionSettings<M extends UIMessage> {
  resume: boolean;
  cancelOnClientAbort: boolean;
  autoContinueAfterToolResult: boolean;
  autoSendAfterAllConfirmationsResolved: boolean;
  syncMessagesToServer: boolean;
  resyncOnReconnect: boolean;
  sendOnlyNewMessages: boolean;
  mergeMessages: (onScreen: M[], stored: M[]) => M[];
  body?: BodySource;
  prepareSendMessagesRequest?: (
    options: PrepareSendMessagesRequestOptions<M>
  ) => PrepareSendMessagesRequestResult | Promise<PrepareSendMessagesRequestResult>;
  tools?: Record<string, AITool>;
  toolsRequiringConfirmation: readonly string[];
  automaticToolResolution: boolean;
  onToolCall?: OnToolCallCallback;
  onTurnEnd?: (event: ChatTurnEndEvent) => void;
  onData?: ChatInit<M>["onData"];
  onError?: ChatInit<M>["onError"];
  onFinish?: ChatInit<M>["onFinish"];
  onFrame?: (frame: unknown) => boolean | void;
}

/** The reactive outputs a session writes (shared across sessions of one composable). */
export interface SessionCells<M extends UIMessage> {
  messages: Cell<M[]>;
  status: Cell<ChatStatus>;
  error: Cell<Error | undefined>;
  serverStreaming: Cell<boolean>;
  recovering: Cell<boolean>;
  toolContinuation: Cell<boolean>;
  connectionError: Cell<Error | null>;
  connection: Cell<ConnectionStatus>;
  loading: Cell<boolean>;
  runningToolCalls: Cell<ReadonlySet<string>>;
  queued: Cell<M[]>;
}

/** How a session loads the stored transcript. */
export type TranscriptReader<M extends UIMessage> = () => Promise<M[]>;

export interface SessionConfig<M extends UIMessage> {
  socket: AgentSocket;
  /** Close the socket when the session ends (false for a shared connection). */
  ownsSocket: boolean;
  chatId: string;
  /** Used in warnings: `agent/name`, never a URL with its query. */
  label: string;
  cells: SessionCells<M>;
  settings: () => SessionSettings<M>;
  chatInit: Pick<
    ChatInit<M>,
    "generateId" | "messageMetadataSchema" | "dataPartSchemas" | "sendAutomaticallyWhen" | "experimental_queue"
  >;
  throttleMs?: number;
  initialMessages: M[];
  /** Read on the first open; absent when the transcript was given. */
  loadOnOpen?: TranscriptReader<M>;
  /** Read on each reconnect when `resyncOnReconnect` is on. */
  readStored?: TranscriptReader<M>;
  /** Whether the readers know where to read (false while a shared socket names no address). */
  canRead?: () => boolean;
  /** The socket's party key, passed to `prepareSendMessagesRequest`. */
  partyKey: () => string;
}

type SendInput<M extends UIMessage> = Parameters<AbstractChat<M>["sendMessage"]>[0];
type Chunk = { type?: unknown; messageId?: unknown };
type Part<M extends UIMessage> = M["parts"][number];

interface ContinuationPin<M extends UIMessage> {
  /** The pinned message's id (it follows a broadcast that renames the message). */
  id: string;
  /** Its tool calls: how it is found again after a rename. */
  toolCallIds: ReadonlySet<string>;
  /** Per AI SDK response message: the pinned parts its chunks go after. */
  bases: Map<string, Array<Part<M>>>;
  /** The continuation extends the pinned message's interrupted text part (see `openDroppedTextStart`). */
  resumesText?: boolean;
}

/**
 * What a regenerate or an edit of this client's changed locally, while the
 * request is in flight: a broadcast the server sent before it took the request
 * still holds the old transcript, and must not put it back (chaos: many clients).
 */
interface RewriteInFlight<M extends UIMessage> {
  /** The transcript's ids when it was called, until `settleRewrite` reads what the AI SDK cut. */
  idsBefore: Set<string> | null;
  /** The message an edit rewrites in place, and its new copy once read (stale broadcasts carry the old). */
  editedId: string | undefined;
  edited: M | null;
  /** The messages it removed. */
  retracted: Set<string>;
  /**
   * A frame carried a removed message. It may have been stale, or the server
   * may have kept the message (it stored a reply still streaming when it took
   * the request): the stored transcript decides, once the request settles.
   */
  heldBack: boolean;
}

const MAX_REMEMBERED_TURNS = 500;
/** How many times a transcript read is made again because a transcript frame overtook it. */
const MAX_OVERTAKEN_READS = 5;
/** Idle probes use longer ids than the transport's 8-character probes, as upstream does. */
const idleProbeIds = createIdGenerator({ size: 21 });
const warnedDeprecations = new Set<string>();

/** One warning per key per page, for deprecated options (as upstream does). */
export function warnDeprecated(key: string, message: string): void {
  if (warnedDeprecations.has(key)) return;
  warnedDeprecations.add(key);
  console.warn(`[agents-vue] Deprecated: ${message}`);
}

class SessionChat<M extends UIMessage> extends AbstractChat<M> {
  get chatState(): PublishingChatState<M> {
    return this.state as PublishingChatState<M>;
  }
}

function capSet(set: Set<string>, max: number) {
  if (set.size <= max) return;
  const oldest = set.values().next().value;
  if (oldest !== undefined) set.delete(oldest);
}

function capMap<V>(map: Map<string, V>, max: number) {
  if (map.size <= max) return;
  const oldest = map.keys().next().value;
  if (oldest !== undefined) map.delete(oldest);
}

/** The first chunk type of a response body without parsing the whole body. */
function peekChunk(body: string): Chunk | undefined {
  // Only `start` chunks matter for bookkeeping on the local path; everything
  // else is rendered by the transport, so most frames skip the parse. (An
  // escaped quote inside a string can never form this sequence.)
  if (!body.includes('"type":"start"')) return undefined;
  const chunk = parseJson(body);
  return isRecord(chunk) ? (chunk as Chunk) : undefined;
}

/**
 * One conversation over one socket: the `cf_agent_*` protocol state machine,
 * the AI SDK chat it drives, and the reactive cells it publishes into.
 *
 * It follows upstream's React hook rule by rule (resume serialization #1837,
 * replay dedupe #1733/#1951, streaming-assistant protection #1778/#2464,
 * buffered sends #1983, held tool calls #2195, recovery #1620) but keeps each
 * rule in a named method. Vue stays outside: the composable hands in cells
 * and reads settings through a getter.
 */
export class ChatSession<M extends UIMessage> {
  readonly chat: SessionChat<M>;
  readonly transport: WebSocketChatTransport<M>;
  private readonly bridge: SocketBridge;
  private readonly config: SessionConfig<M>;
  private readonly cells: SessionCells<M>;
  private readonly state: PublishingChatState<M>;
  private disposed = false;

  // Requests this client owns (shared with the transport as activeRequestIds).
  private readonly localRequestIds = new Set<string>();
  private readonly bufferedSendIds = new Set<string>();
  /**
   * User messages of the local request in flight that no transcript frame has
   * carried yet. A transcript frame that lags behind the request (servers
   * before `@cloudflare/ai-chat` 0.12.2 broadcast the previous turn's after
   * its done frame, and never send the sender its own turn's) must not drop them.
   * `lackedByFrame`: a frame came without it, which a `skipped` end confirms as a refusal.
   */
  private readonly unechoedSendIds = new Map<string, { lackedByFrame: boolean }>();
  private readonly pendingReplayResume = new Set<string>();
  private readonly replayRebuiltIds = new Set<string>();
  /** Assistant messages a continuation replayed without `seq` extends; collapsed until its stream finishes. */
  private readonly unsequencedReplayIds = new Set<string>();
  /** A regenerate or an edit of this client's in flight (see `rewrite`). */
  private rewriteInFlight: RewriteInFlight<M> | null = null;
  /**
   * What this client's clear removed (`cleared`), until a transcript read
   * started after the clear answers: the server does not echo a clear to its
   * sender, and a broadcast it sent before it took the clear still holds them
   * (chaos: many clients). Messages first seen from the server meanwhile
   * (`arrived`) may be as stale; the read keeps those it still has.
   */
  private clearHold: { cleared: Set<string>; arrived: Set<string> } | null = null;
  /**
   * Replies whose turn ended. One still without parts once the chat settles is
   * removed: `AIChatAgent` stores no reply without parts (a turn that failed
   * or was cut off right after its `start`), so it would show only here.
   */
  private endedReplyIds = new Set<string>();
  /**
   * Turns this client stopped (its requests, a continuation it cancelled).
   * Each is followed no further, and its end reads the stored transcript:
   * the server kept what it generated until it took the cancel, which this
   * client dropped and, as the sender, gets no broadcast of (issue 21, 2).
   */
  private readonly stoppedRequestIds = new Set<string>();
  /**
   * Streams this client ACKed whose replay has not yet carried a chunk. One
   * that ends so is read back: the server took the ACK after the stream
   * closed, so what streamed while the socket was down was never replayed.
   */
  private readonly ackedUnreplayed = new Set<string>();
  private readonly fallbackAcked = new Set<string>();
  private readonly localResponseIds = new Map<string, string>();
  /** Highest `seq` delivered to each stream the transport attached to, since its ACK. */
  private readonly attachedSeq = new Map<string, number>();
  /** Per attached continuation: the text parts its current stream opened (reset by each ACK). */
  private readonly continuationTextIds = new Map<string, Set<string>>();
  /** A live local assistant kept at the tail; `anchorId` null means "first", undefined "unknown". */
  private protection: { assistantId: string; anchorId: string | null | undefined } | null = null;
  private observer: { streamId: string; message: ObservedMessage } | null = null;
  private lastObservedMerge: M | null = null;

  private readonly turnErrors = new Map<string, string>();
  private readonly endedTurns = new Set<string>();
  private pendingTurnEnds: ChatTurnEndEvent[] = [];

  // Tool calls
  private readonly processedToolCalls = new Set<string>();
  private readonly toolResults = new Map<string, unknown>();
  private readonly runningToolCalls = new Set<string>();
  private resolvingTools = false;
  /** The assistant message a running continuation extends, and what it held before (#1229). */
  private continuationPin: ContinuationPin<M> | null = null;
  /** Local replies whose stream named no id: the stored copy, under the server's id, replaces each (see `protectUnnamedReply`). */
  private readonly unnamedReplyIds = new Set<string>();
  /** Replies the server renamed after the AI SDK seeded them from an earlier assistant: parts to drop. */
  private readonly reseededReplies = new Map<string, number>();
  /** The running continuation's request id, once the server named it (pending or resuming). */
  private continuationRequestId: string | null = null;
  /** Whether the transport attached to that continuation (then `stop()` cancels it there). */
  private continuationAttached = false;
  /** A continuation stopped before it was attached: cancelled as soon as it starts. */
  private stoppedContinuation: { probeId: string; requestId: string | null } | null = null;
  /** Tool calls first seen in another client's turn (the observer path): that client answers them. */
  private readonly othersToolCalls = new Set<string>();

  // Resume serialization (#1837)
  private resumeGeneration = 0;
  /** The running AI SDK resume; `keptError` is the error it must leave in place if it finds nothing (issue 21, 5). */
  private resumeOperation: { generation: number; promise: Promise<void>; keptError: Error | undefined } | null = null;
  private reconnectProbePending = false;

  // Socket edges
  private socketOpen = false;
  private everOpened = false;
  private sawClose = false;
  private idleProbeNeeded = false;
  private idleProbeId: string | null = null;
  private serverReportsRecovery = false;
  private failedAttempts = 0;

  // Held turns (#2195, #1620)
  private unresolvedObservedRequestId: string | null = null;
  private recoveringRequestId: string | null = null;

  // Tool continuation
  private continuationResuming = false;
  private continuationPending = false;
  private observedContinuationId: string | null = null;
  private continuationTimer: ReturnType<typeof setTimeout> | null = null;
  private continuationGeneration = 0;

  // Transcript
  /** Bumped by anything that empties or rewrites the transcript, so late reads are dropped. */
  private transcriptEpoch = 0;
  private readonly knownIds = new Set<string>();
  private loadStarted = false;
  private readonly loaded: Promise<void>;
  private resolveLoaded!: () => void;
  private resyncGeneration = 0;
  /**
   * Transcript frames handled so far. A read that one overtook may answer
   * with an older transcript than the frame's, so it is made again.
   */
  private transcriptFrames = 0;
  /** This client cleared while a turn ran: the turn's `aborted` end triggers a read (see `handleClear`). */
  private clearedDuringTurn = false;

  // Offline sends
  private readonly outbox: Array<{
    message: M;
    options: ChatRequestOptions | undefined;
    settle: () => void;
  }> = [];
  private flushingOutbox = false;

  private lastStatus: ChatStatus = "ready";
  private reconcileQueued = false;
  private readonly warned = new Map<string, number>();

  constructor(config: SessionConfig<M>) {
    this.config = config;
    this.cells = config.cells;
    this.loaded = new Promise((resolve) => {
      this.resolveLoaded = resolve;
    });
    for (const message of config.initialMessages) this.knownIds.add(message.id);

    this.state = new PublishingChatState<M>({
      initialMessages: [...config.initialMessages],
      messages: config.cells.messages,
      status: config.cells.status,
      error: config.cells.error,
      throttleMs: config.throttleMs,
      decorate: (message) => this.withToolResults(message),
      onChange: (kind) => this.onStateChange(kind)
    });

    this.bridge = new SocketBridge(config.socket, {
      message: (data) => this.onSocketData(data),
      open: () => this.onSocketOpen(),
      close: (event) => this.onSocketClose(event),
      error: () => this.onSocketError(),
      transportSend: (data) => this.onTransportSend(data)
    });

    this.transport = new WebSocketChatTransport<M>({
      agent: this.bridge.transportView,
      activeRequestIds: this.localRequestIds,
      cancelOnClientAbort: this.settings.cancelOnClientAbort,
      onRequestBuffered: (messageId) => {
        if (messageId) this.bufferedSendIds.add(messageId);
      },
      prepareBody: (request) => this.prepareBody(request)
    });

    this.chat = new SessionChat<M>({
      ...config.chatInit,
      id: config.chatId,
      // The AI SDK writes its responses through a view that places a
      // continuation in the message it continues (see placeResponse).
      state: this.chatFacingState(),
      transport: this.transport,
      onData: (part) => this.settings.onData?.(part),
      onError: (error) => this.settings.onError?.(error),
      onFinish: (event) => {
        this.unechoedSendIds.clear();
        if (this.unsequencedReplayIds.delete(event.message.id)) this.collapseMessage(event.message.id);
        this.reseededReplies.delete(event.message.id);
        this.rememberFinishedTurn(event);
        this.settings.onFinish?.(event);
      }
    });

    this.cells.serverStreaming.value = false;
    this.cells.recovering.value = false;
    this.cells.toolContinuation.value = false;
    this.cells.runningToolCalls.value = new Set();
    this.cells.queued.value = [];
    this.cells.loading.value = !!config.loadOnOpen;
    this.cells.connectionError.value = config.socket.connectionError ?? null;
    this.cells.connection.value = this.bridge.isOpen ? "open" : "connecting";
    if (!config.loadOnOpen) this.resolveLoaded();

    if (this.bridge.isOpen) this.onSocketOpen();
  }

  private get settings(): SessionSettings<M> {
    return this.config.settings();
  }

  /** Resolves once the first transcript is in (or was given). */
  get ready(): Promise<void> {
    return this.loaded;
  }

  get messages(): M[] {
    return this.state.messages;
  }

  // ─── Socket events ────────────────────────────────────────────────

  private onSocketOpen(): void {
    if (this.disposed) return;
    this.socketOpen = true;
    this.failedAttempts = 0;
    this.cells.connection.value = "open";
    this.cells.connectionError.value = null;
    const first = !this.everOpened;
    this.everOpened = true;
    if (first) {
      // Probe first, then read: a turn still running is offered on this
      // socket; one that ended before it opened is already stored.
      if (this.settings.resume) void this.resumeStream().catch(() => {});
      this.startFirstLoad();
    } else if (this.sawClose) {
      this.sawClose = false;
      this.reconnectProbePending = true;
      this.tryReconnectProbe();
      this.rereadTranscript();
    }
    this.scheduleReconcile();
  }

  private onSocketClose(event: CloseInfo): void {
    if (this.disposed) return;
    const wasOpen = this.socketOpen;
    this.socketOpen = false;
    this.cells.connection.value = this.bridge.finalClose ? "closed" : "connecting";
    if (!wasOpen) {
      // The attempt never opened: the address is unreachable or refused.
      this.failedAttempts++;
      this.cells.connectionError.value =
        this.config.socket.connectionError ?? connectionFailure(this.config.label, event, this.failedAttempts);
    } else if (this.config.socket.connectionError) {
      this.cells.connectionError.value = this.config.socket.connectionError;
    }
    if (this.bridge.finalClose) this.failOutbox();
    if (!wasOpen) return;

    this.sawClose = true;
    this.serverReportsRecovery = false;
    this.fallbackAcked.clear();
    // The transport ends every local stream on close and no done frame will
    // reach us, so a cut-off local copy must not win over later snapshots (#2464).
    this.protection = null;

    const unfinished = this.transport.activeServerTurnId;
    if (unfinished !== null) this.unresolvedObservedRequestId = unfinished;

    if (!this.settings.resume) {
      this.idleProbeNeeded ||=
        unfinished !== null ||
        this.observer !== null ||
        this.unresolvedObservedRequestId !== null ||
        this.recoveringRequestId !== null;
      this.clearObserver();
    }
    this.scheduleReconcile();
  }

  private onSocketError(): void {
    if (this.disposed || this.socketOpen) return;
    this.cells.connectionError.value ??= connectionFailure(this.config.label, {}, this.failedAttempts + 1);
  }

  private onSocketData(data: unknown): void {
    if (this.disposed) return;
    // The first read waits for a socket that names its address only once connected (issue 21, 7).
    if (!this.loadStarted && this.everOpened) this.startFirstLoad();
    const parsed = parseJson(data);
    const onFrame = this.settings.onFrame;
    if (onFrame) {
      try {
        if (onFrame(parsed === undefined ? data : parsed) === true) return;
      } catch (error) {
        console.error("[agents-vue] onFrame threw; the frame is handled as usual.", error);
      }
    }
    if (parsed === undefined) {
      this.warnLimited("non-json", `Ignored a socket frame that is not JSON (${describeData(data)}).`);
      return;
    }
    const reading = readFrame<M>(parsed);
    if (reading.kind === "other") return;
    if (reading.kind === "invalid") {
      this.warnLimited(reading.problem, `Ignored ${reading.problem}.`);
      return;
    }
    const frame = reading.frame;
    if (frame.kind === "response" && this.isRepeatedReplay(frame)) return;
    // Only the transport's own streams read response frames, and only their
    // requests' (checked before handling: a terminal frame releases the id).
    const forward = frame.kind === "response" && this.localRequestIds.has(frame.id);
    try {
      this.handleFrame(frame);
    } catch (error) {
      // A frame must never take the chat down; report it and carry on.
      console.error("[agents-vue] Failed to apply a chat frame:", error);
    }
    if (!forward) return;
    if (frame.continuation) this.openDroppedTextStart(frame as ResponseFrame);
    this.bridge.deliver(frame as ResponseFrame, data as string);
  }

  /**
   * A continuation that recovers an interrupted turn (after a server restart)
   * carries no `text-start` for the text part that was still streaming:
   * `AIChatAgent` appends its deltas to that part. The AI SDK cannot apply a
   * delta to a part its stream never opened, so the part is opened for it
   * here, and `mergeIntoPinned` joins it to the interrupted part.
   */
  private openDroppedTextStart(frame: ResponseFrame): void {
    if (!frame.body.includes('"text-')) return;
    const chunk = parseJson(frame.body);
    if (!isRecord(chunk) || typeof chunk.id !== "string") return;
    let open = this.continuationTextIds.get(frame.id);
    if (!open) this.continuationTextIds.set(frame.id, (open = new Set()));
    if (chunk.type === "text-start") open.add(chunk.id);
    if (chunk.type !== "text-delta" || open.has(chunk.id)) return;
    open.add(chunk.id);
    if (this.continuationPin) this.continuationPin.resumesText = true;
    const body = JSON.stringify({ type: "text-start", id: chunk.id });
    const start = { ...frame, body, seq: undefined, done: false, error: false, replay: false, replayComplete: false };
    this.bridge.deliver(start, JSON.stringify({ type: Wire.chatResponse, id: frame.id, body, done: false, continuation: true }));
  }

  /**
   * Effects follow state changes. While a reply streams, a message change
   * alone cannot make any of them fire (they wait for the turn to settle),
   * so per-chunk writes skip the pass unless a replayed message needs its
   * repeated text collapsed as it grows.
   */
  private onStateChange(kind: "messages" | "status"): void {
    if (kind === "messages" && this.replayRebuiltIds.size === 0 && this.unsequencedReplayIds.size === 0) {
      const status = this.state.status;
      if (status === "streaming" || status === "submitted" || this.cells.serverStreaming.value) return;
    }
    this.scheduleReconcile();
  }

  /** The transport ACKed a stream: its replay starts from chunk 0 again. */
  private onTransportSend(data: string): void {
    if (!data.includes(Wire.streamResumeAck)) return;
    const frame = parseJson(data);
    // The resume attached a stream: its status replaces the error it started from.
    if (this.resumeOperation) this.resumeOperation.keptError = undefined;
    if (isRecord(frame) && typeof frame.id === "string") {
      this.attachedSeq.set(frame.id, -1);
      this.continuationTextIds.delete(frame.id);
      this.ackedUnreplayed.add(frame.id);
    }
  }

  /**
   * A stream this client attached to replays its buffer once per ACK. Should
   * the same buffer arrive again on the socket, the chunks it already
   * delivered are dropped by `seq`, so nothing renders twice (#1733).
   * Continuation replays are left to the transport's own ledger (#1951).
   */
  private isRepeatedReplay(frame: ResponseFrame): boolean {
    const highest = this.attachedSeq.get(frame.id);
    if (highest === undefined || frame.continuation) return false;
    if (frame.done || frame.error) {
      this.attachedSeq.delete(frame.id);
      return false;
    }
    if (frame.seq === undefined) return false;
    if (frame.replay && frame.seq <= highest) return true;
    this.attachedSeq.set(frame.id, Math.max(highest, frame.seq));
    return false;
  }

  private handleFrame(frame: ChatFrame<M>): void {
    switch (frame.kind) {
      case "clear":
        this.clearObserver(false);
        this.unresolvedObservedRequestId = null;
        this.recoveringRequestId = null;
        this.cells.recovering.value = false;
        this.resetLocalState();
        // The server sends the clear once it is done with it, so a read now sees its final transcript.
        this.rereadTranscript(true);
        return;
      case "recovering":
        this.cells.recovering.value = frame.recovering;
        this.serverReportsRecovery = frame.recovering;
        if (!frame.recovering) this.recoveringRequestId = null;
        this.scheduleReconcile();
        return;
      case "messages":
        this.transcriptFrames++;
        this.applySnapshot(frame.messages, frame.connect);
        return;
      case "message-updated":
        this.transcriptFrames++;
        this.applyMessageUpdate(frame.message);
        return;
      case "resume-none":
        this.onResumeNone(frame.reason, frame.probeId);
        return;
      case "pending":
        this.transport.handleStreamPending();
        this.noteContinuationPending(frame.id, frame.probeId);
        return;
      case "resuming":
        this.onStreamResuming(frame.id, frame.probeId);
        return;
      case "response":
        this.onResponse(frame);
        return;
    }
  }

  // ─── Transcript frames ────────────────────────────────────────────

  private applySnapshot(received: M[], connect: boolean): void {
    const snapshot = this.withoutRetracted(received);
    const buffered = connect ? new Set(this.bufferedSendIds) : new Set<string>();
    this.bufferedSendIds.clear();
    for (const message of snapshot) {
      this.knownIds.add(message.id);
      this.unechoedSendIds.delete(message.id);
    }
    for (const [id, send] of this.unechoedSendIds) {
      buffered.add(id);
      send.lackedByFrame = true;
    }
    const current = this.state.messages;
    let next = this.keepProtectedAssistant(snapshot, current);
    // An observer builds the in-flight assistant itself; a snapshot behind the
    // stream must not make its parts flicker away, unless it diverged (#2166).
    const observed = this.observer?.message;
    if (observed?.hasParts) {
      observed.adoptStoredId(next, current);
      const stored = next.find((message) => message.id === observed.id);
      if (observed.parts.length >= (stored?.parts.length ?? 0) && !observed.divergesFrom(next)) {
        next = this.mergeObserved(observed, next);
      }
    }
    this.replaceAll(restoreBuffered(next, current, buffered));
  }

  /** What the server sent, less the messages a rewrite of this client's in flight removed. */
  private withoutRetracted(messages: M[]): M[] {
    this.settleRewrite();
    const rewritten = this.rewriteInFlight?.edited;
    if (!this.rewriteInFlight?.retracted.size && !rewritten && !this.clearHold) return messages;
    return messages
      .filter((message) => !this.isRetracted(message.id))
      .map((message) => (message.id === rewritten?.id ? rewritten : message));
  }

  /**
   * Whether a rewrite or a clear of this client's in flight removed the message
   * with this id. Called for each message a frame carries, it also records what
   * the frame showed: a removed message (the rewrite reads back once it
   * settles) and, during a clear's hold, a message new here (`arrived`).
   */
  private isRetracted(id: string): boolean {
    this.settleRewrite();
    const rewrite = this.rewriteInFlight;
    if (rewrite?.retracted.has(id)) {
      rewrite.heldBack = true;
      return true;
    }
    const hold = this.clearHold;
    if (!hold) return false;
    if (hold.cleared.has(id)) return true;
    // Only what is new here: a message this client sent after the clear is on
    // screen before any frame carries it, and is never taken back.
    if (!this.state.messages.some((message) => message.id === id)) hold.arrived.add(id);
    return false;
  }

  /**
   * Reads what the rewrite in flight removed, once: the AI SDK cuts the
   * transcript within microtasks of the call, so by the time any socket frame
   * is handled the cut is done.
   */
  private settleRewrite(): void {
    const rewrite = this.rewriteInFlight;
    const before = rewrite?.idsBefore;
    if (!rewrite || !before) return;
    rewrite.idsBefore = null;
    const now = new Set(this.state.messages.map((message) => message.id));
    for (const id of before) if (!now.has(id)) rewrite.retracted.add(id);
    const editedId = rewrite.editedId;
    if (editedId !== undefined) rewrite.edited = this.state.messages.find((message) => message.id === editedId) ?? null;
  }

  /** Runs a regenerate or an edit, holding back what it removes from stale broadcasts until it settles. */
  private rewrite(run: () => Promise<void>, editedId?: string): Promise<void> {
    this.settleRewrite();
    // A rewrite sent while another is in flight takes over what that one holds back.
    const previous = this.rewriteInFlight;
    const books: RewriteInFlight<M> = {
      idsBefore: new Set(this.state.messages.map((message) => message.id)),
      editedId,
      edited: previous?.edited ?? null,
      retracted: previous?.retracted ?? new Set(),
      heldBack: previous?.heldBack ?? false
    };
    this.rewriteInFlight = books;
    const request = run();
    const release = () => {
      // A later rewrite took over the books (or a clear dropped them); they are not this one's to release.
      if (this.rewriteInFlight !== books) return;
      this.rewriteInFlight = null;
      if (books.heldBack) this.rereadTranscript(true);
    };
    void request.then(release, release);
    return request;
  }

  /** Removes the messages `drop` picks without telling the server; nothing changes when it picks none. */
  private removeMessages(drop: (message: M) => boolean): void {
    const messages = this.state.messages;
    const kept = messages.filter((message) => !drop(message));
    if (kept.length !== messages.length) this.replaceAll(kept);
  }

  /** Replaces the working transcript without telling the server (it told us). */
  private replaceAll(next: M[]): void {
    this.state.messages = next;
  }

  private applyMessageUpdate(updated: M): void {
    if (this.isRetracted(updated.id)) return;
    const messages = this.state.messages;
    let index = messages.findIndex((message) => message.id === updated.id);
    if (index < 0) {
      const toolCallIds = new Set(
        updated.parts.flatMap((part) => {
          const id = (part as { toolCallId?: unknown }).toolCallId;
          return typeof id === "string" && id ? [id] : [];
        })
      );
      if (toolCallIds.size > 0) {
        index = messages.findIndex((message) =>
          message.parts.some((part) => toolCallIds.has((part as { toolCallId?: string }).toolCallId ?? ""))
        );
      }
    }
    // Never append from an update: the message arrives by its own stream or
    // a transcript frame, and appending here duplicated it (#1094).
    if (index < 0) return;
    const localId = (messages[index] as M).id;
    this.knownIds.add(localId);
    this.knownIds.add(updated.id);
    this.state.replaceMessage(index, { ...updated, id: localId });
  }

  /** Keeps a live local assistant at the tail when a snapshot lags behind it (#1778). */
  private keepProtectedAssistant(snapshot: readonly M[], current: readonly M[]): M[] {
    const protection = this.protection;
    if (!protection) return [...snapshot];
    const index = snapshot.findIndex((message) => message.id === protection.assistantId);
    if (index >= 0 && snapshot.slice(index + 1).some((message) => message.role === "assistant")) {
      // The server moved past the protected message: trust the snapshot.
      this.protection = null;
      return [...snapshot];
    }
    const live =
      current.find((message) => message.id === protection.assistantId) ??
      snapshot.find((message) => message.id === protection.assistantId);
    if (!live) return [...snapshot];
    return [...snapshot.filter((message) => message.id !== protection.assistantId), live];
  }

  private protectStreamingTail(): void {
    if (this.state.status !== "streaming") return;
    const messages = this.state.messages;
    const index = messages.findLastIndex((message) => message.role === "assistant");
    if (index < 0) return;
    const assistant = messages[index] as M;
    if (this.protection?.assistantId !== assistant.id) {
      this.protection = { assistantId: assistant.id, anchorId: messages[index - 1]?.id ?? null };
    }
    const moved = moveToEnd(messages, assistant.id);
    if (moved !== messages) this.state.messages = moved;
  }

  private releaseProtection(assistantId: string | undefined): void {
    const protection = this.protection;
    if (!protection || (assistantId !== undefined && protection.assistantId !== assistantId)) return;
    this.protection = null;
    const messages = this.state.messages;
    const from = messages.findIndex((message) => message.id === protection.assistantId);
    if (from < 0 || protection.anchorId === undefined) return;
    const next = messages.slice();
    const [message] = next.splice(from, 1);
    if (protection.anchorId === null) next.unshift(message as M);
    else {
      const anchor = next.findIndex((candidate) => candidate.id === protection.anchorId);
      next.splice(anchor >= 0 ? anchor + 1 : from, 0, message as M);
    }
    this.state.messages = next;
  }

  /** Clears a trailing assistant a replay is about to rebuild, keeping its shell (#1733). */
  private resetForReplay(messageId: string): void {
    const messages = this.state.messages;
    const last = messages[messages.length - 1];
    if (!last || last.role !== "assistant" || last.id !== messageId) return;
    this.replayRebuiltIds.add(messageId);
    this.state.replaceMessage(messages.length - 1, { ...last, parts: [] });
  }

  // ─── Resume handshake ─────────────────────────────────────────────

  private onResumeNone(reason: string | undefined, probeId: string | undefined): void {
    if (this.stoppedContinuation?.probeId === probeId) this.stoppedContinuation = null;
    const handled = this.transport.handleStreamResumeNone(probeId === undefined ? {} : { probeId });
    const answersIdleProbe = this.idleProbeId !== null && probeId === this.idleProbeId;
    if (answersIdleProbe) this.idleProbeId = null;
    // Only a correlated `idle` proves the server is inactive (#1914).
    if ((handled || answersIdleProbe) && reason === "idle" && typeof probeId === "string") {
      this.clearObserver(false);
      this.unresolvedObservedRequestId = null;
      if (!this.serverReportsRecovery) this.recoveringRequestId = null;
      if (this.observedContinuationId !== null) this.resetToolContinuation();
    }
    this.scheduleReconcile();
  }

  private onStreamResuming(id: string, probeId: string | undefined): void {
    // Server turns are serialized: an offer for another request ends the held one.
    if (this.unresolvedObservedRequestId !== id) this.unresolvedObservedRequestId = null;
    if (probeId !== undefined && probeId === this.idleProbeId) this.idleProbeId = null;
    if (this.cancelStoppedContinuation(id, probeId)) return;
    const awaiting = this.transport.isAwaitingResume();
    const earlyContinuation = this.continuationResuming && !awaiting;
    if (!this.settings.resume && !awaiting && !earlyContinuation) {
      // Not resuming: a live stream is withheld from this socket until it ends.
      if (probeId === undefined) this.unresolvedObservedRequestId = id;
      if (this.recoveringRequestId !== null && this.recoveringRequestId !== id) this.recoveringRequestId = null;
      this.scheduleReconcile();
      return;
    }
    // A probe goes out on this socket as soon as the chat settles; its answer
    // offers the same stream again, so ACKing this one too would replay twice.
    if (probeId === undefined && !awaiting && !earlyContinuation && this.reconnectProbePending) return;
    if (!this.continuationResuming) this.pendingReplayResume.add(id);
    // The transport's waiting probe takes the offer: it ACKs and attaches.
    if (this.transport.handleStreamResuming({ id })) {
      this.noteContinuationAttached(id);
      this.scheduleReconcile();
      return;
    }
    // The server offers from both onConnect and the probe answer (#1733). A turn this client stopped is not followed again.
    if (this.localRequestIds.has(id) || this.fallbackAcked.has(id) || this.stoppedRequestIds.has(id)) return;
    if (earlyContinuation) {
      this.continuationPending = false;
      this.observedContinuationId = id;
      this.clearContinuationTimer();
    }
    // An early continuation extends the message the tool call is in, even
    // before its replayed `start` (an empty replay would append a blank reply).
    this.observer = { streamId: id, message: new ObservedMessage(generateId(), earlyContinuation) };
    this.transport.observeServerTurn(id);
    this.setServerStreaming(true);
    if (this.recoveringRequestId !== null && this.recoveringRequestId !== id) this.recoveringRequestId = null;
    this.cells.recovering.value = false;
    this.fallbackAcked.add(id);
    this.ackedUnreplayed.add(id);
    this.send({ type: Wire.streamResumeAck, id });
    this.scheduleReconcile();
  }

  // ─── Response frames ──────────────────────────────────────────────

  private onResponse(frame: ResponseFrame): void {
    const { id } = frame;
    if ((frame.done || frame.error) && this.unresolvedObservedRequestId === id) {
      this.unresolvedObservedRequestId = null;
    }
    if (frame.done && frame.outcome === "recovering") this.recoveringRequestId = id;
    else if (
      this.recoveringRequestId !== null &&
      this.recoveringRequestId !== id &&
      !frame.replay &&
      frame.outcome !== "skipped"
    ) {
      this.recoveringRequestId = null;
    }
    this.reportTurnEnd(frame);
    if (frame.done && this.clearedDuringTurn) {
      // The turn this client's clear interrupted has ended: the server may have stored its partial reply.
      this.clearedDuringTurn = false;
      // Servers before @cloudflare/ai-chat 0.12.2 name no outcome: read then too.
      if (frame.outcome === "aborted" || frame.outcome === undefined) this.rereadTranscript(true);
    }
    // Servers before @cloudflare/ai-chat 0.12.2 replay a continuation without
    // `seq`, so the chunks this client already applied cannot be skipped
    // (#1951): the replayed text is collapsed into the text it repeats instead.
    if (frame.replay && frame.continuation && frame.seq === undefined && frame.body.trim()) {
      const last = this.state.messages.at(-1);
      if (last?.role === "assistant") this.unsequencedReplayIds.add(last.id);
    }
    if (frame.replay && frame.body.trim()) this.ackedUnreplayed.delete(id);
    const endedUnreplayed = (frame.done || frame.error) && this.ackedUnreplayed.delete(id);
    if (frame.done || frame.error) {
      const reply = this.localResponseIds.get(id) ?? (this.observer?.streamId === id ? this.observer.message.id : undefined);
      if (reply !== undefined) this.endedReplyIds.add(reply);
    }
    if (this.localRequestIds.has(id)) this.onLocalResponse(frame);
    else this.onObservedResponse(frame);
    if (frame.done || frame.error) this.scheduleReconcile();
    // The stream had closed by the time the server took this client's ACK: it
    // replayed nothing (only its end, or an empty replay before the held end),
    // so what streamed while the socket was down is only in the stored
    // transcript (chaos: socket drops).
    if (endedUnreplayed) this.rereadTranscript();
    // A stopped turn's end reads back what the server stored, however far its reply got here (issue 21, 2).
    if ((frame.done || frame.error) && this.stoppedRequestIds.delete(id)) this.rereadTranscript();
  }

  /** A frame of a request this client owns: the transport renders it, we keep the books. */
  private onLocalResponse(frame: ResponseFrame): void {
    const { id } = frame;
    if (frame.continuation && !frame.done && !frame.error) this.pinContinuation();
    const chunk = peekChunk(frame.body);
    if (chunk?.type === "start" && typeof chunk.messageId === "string") {
      const assistantId = chunk.messageId;
      this.localResponseIds.set(id, assistantId);
      if (!frame.continuation && this.protection?.assistantId !== assistantId) {
        // Re-arm protection on the real assistant id of this turn.
        const messages = this.state.messages;
        const index = messages.findIndex((message) => message.id === assistantId);
        // Before the transcript is in, where this reply belongs is unknown.
        const anchorId = this.cells.loading.value
          ? undefined
          : index >= 0
            ? (messages[index - 1]?.id ?? null)
            : (messages[messages.length - 1]?.id ?? null);
        this.protection = { assistantId, anchorId };
      }
      if (
        frame.replay &&
        !frame.continuation &&
        !this.continuationResuming &&
        this.observedContinuationId !== id
      ) {
        this.pendingReplayResume.delete(id);
        this.resetForReplay(assistantId);
      }
    }
    if (frame.done || frame.error || frame.replayComplete) this.pendingReplayResume.delete(id);
    if (frame.done || frame.error) {
      if (this.observer?.streamId === id) {
        this.observer = null;
        this.setServerStreaming(false);
      }
      if (frame.outcome === "skipped") this.dropRefusedSends();
      this.transport.handleServerTurnCompleted(id);
      const reply = this.localResponseIds.get(id);
      this.releaseProtection(reply);
      if (reply !== undefined && this.unnamedReplyIds.has(reply) && !frame.error) this.rereadTranscript();
      this.localResponseIds.delete(id);
      this.localRequestIds.delete(id);
      this.continuationTextIds.delete(id);
      this.fallbackAcked.delete(id);
      if (this.observedContinuationId === id) this.resetToolContinuation();
    }
  }

  /** A frame of a request this client did not send: render it through the observer. */
  private onObservedResponse(frame: ResponseFrame): void {
    const { id } = frame;
    const observing = this.observer?.streamId === id;
    if (frame.replay && !this.observer && !this.pendingReplayResume.has(id)) return;
    // A turn this client stopped and does not watch is shown no further; its end reads back (issue 22, 3).
    if (!observing && !frame.done && !frame.error && this.stoppedRequestIds.has(id)) return;
    // A request nobody here watches ended (e.g. a send the server skipped).
    if (
      frame.done &&
      !frame.error &&
      !observing &&
      !this.pendingReplayResume.has(id) &&
      this.observedContinuationId !== id
    ) {
      this.transport.appliedChunks.forget(id);
      this.transport.handleServerTurnCompleted(id);
      this.fallbackAcked.delete(id);
      return;
    }
    if (frame.error) {
      this.pendingReplayResume.delete(id);
      this.transport.appliedChunks.forget(id);
      this.transport.handleServerTurnCompleted(id);
      this.fallbackAcked.delete(id);
      this.cells.recovering.value = false;
      if (!this.observer || observing) this.clearObserver(false);
      if (this.observedContinuationId === id) this.resetToolContinuation();
      return;
    }

    const appliedReplay = this.transport.appliedChunks.isAppliedReplay(id, frame);
    let chunk: unknown;
    if (frame.body.trim()) {
      chunk = parseJson(frame.body);
      if (chunk === undefined) {
        this.warnLimited("bad-chunk", `Ignored a stream chunk that is not JSON (request ${id}).`);
      } else if (isRecord(chunk)) {
        if (
          frame.replay &&
          !frame.continuation &&
          !this.continuationResuming &&
          this.observedContinuationId !== id &&
          chunk.type === "start" &&
          typeof chunk.messageId === "string"
        ) {
          this.pendingReplayResume.delete(id);
          this.resetForReplay(chunk.messageId);
        }
        if (typeof chunk.type === "string" && chunk.type.startsWith("data-") && !appliedReplay) {
          this.settings.onData?.(chunk as never);
        }
        if (this.observedContinuationId !== id) this.noteOthersToolCall(chunk);
      }
    }
    if (frame.done || frame.replayComplete) this.pendingReplayResume.delete(id);
    if (frame.done) {
      this.transport.handleServerTurnCompleted(id);
      this.fallbackAcked.delete(id);
      if (frame.outcome !== "recovering") this.cells.recovering.value = false;
    }
    const endsObservedContinuation = frame.done && this.observedContinuationId === id;
    const chunkType = isRecord(chunk) ? chunk.type : undefined;
    // A replayed `start` still re-seeds the message, which holds the applied chunks.
    const alreadyApplied = appliedReplay && chunkType !== "start";
    if (frame.done) this.transport.appliedChunks.forget(id);
    else if (!alreadyApplied) this.transport.appliedChunks.record(id, frame.seq);

    this.observeChunk(frame, alreadyApplied ? undefined : chunk);
    if (endsObservedContinuation) this.resetToolContinuation();
  }

  /** The observer state machine: one accumulating message per observed stream. */
  private observeChunk(frame: ResponseFrame, chunk: unknown): void {
    const replayedStart = frame.replay && isRecord(chunk) && chunk.type === "start";
    if (!this.observer || this.observer.streamId !== frame.id || replayedStart) {
      // A replay restarts from chunk 0: a fresh message makes it idempotent.
      this.observer = { streamId: frame.id, message: new ObservedMessage(generateId(), frame.continuation) };
      // stop() cancels the turn this tab watches, however it arrived (issue 21, 1).
      if (!frame.done && this.transport.activeServerTurnId === null) this.transport.observeServerTurn(frame.id);
    }
    const observed = this.observer.message;
    if (chunk !== undefined) observed.apply(chunk);
    if (frame.done) {
      this.observer = null;
      this.mergeObservedUnlessDiverged(observed);
      if (observed.hasParts) this.knownIds.add(observed.id);
      this.setServerStreaming(false);
      return;
    }
    this.setServerStreaming(true);
    if (chunk !== undefined && !frame.replay) this.mergeObservedUnlessDiverged(observed);
    else if (frame.replayComplete) this.replaceAll(this.mergeObserved(observed, this.state.messages));
  }

  private mergeObservedUnlessDiverged(observed: ObservedMessage): void {
    // A regenerate of this client's replaced the message this turn extends.
    if (this.isRetracted(observed.id)) return;
    const messages = this.state.messages;
    const index = observed.targetIndex(messages);
    // Our own last merge cannot have diverged; only another writer's copy can.
    if (index >= 0 && messages[index] !== this.lastObservedMerge && observed.divergesFrom(messages)) return;
    const message = observed.toMessage<M>();
    this.lastObservedMerge = message;
    if (index >= 0) this.state.replaceMessage(index, message);
    else this.state.pushMessage(message);
  }

  private mergeObserved(observed: ObservedMessage, messages: M[]): M[] {
    if (this.isRetracted(observed.id)) return messages;
    const index = observed.targetIndex(messages);
    const next = messages.slice();
    if (index >= 0) next[index] = observed.toMessage<M>();
    else next.push(observed.toMessage<M>());
    return next;
  }

  /** A terminal flag must never show before the final message does. */
  private setServerStreaming(streaming: boolean): void {
    if (!streaming && this.cells.serverStreaming.value) this.state.flush();
    this.cells.serverStreaming.value = streaming;
  }

  private clearObserver(holdObserved = true): void {
    if (holdObserved && this.observer) this.unresolvedObservedRequestId = this.observer.streamId;
    this.observer = null;
    this.setServerStreaming(false);
    if (holdObserved && this.observedContinuationId !== null) this.resetToolContinuation();
  }

  // ─── Turn end ─────────────────────────────────────────────────────

  private reportTurnEnd(frame: ResponseFrame): void {
    if (frame.error && !frame.done) {
      this.turnErrors.set(frame.id, frame.body);
      capMap(this.turnErrors, MAX_REMEMBERED_TURNS);
      return;
    }
    if (!frame.done) return;
    const earlierError = this.turnErrors.get(frame.id);
    this.turnErrors.delete(frame.id);
    const outcome = frame.error
      ? "error"
      : (frame.outcome ?? (earlierError !== undefined ? "error" : "completed"));
    if (outcome === "recovering" || this.endedTurns.has(frame.id)) return;
    this.endedTurns.add(frame.id);
    capSet(this.endedTurns, MAX_REMEMBERED_TURNS);
    const error = frame.error ? frame.body : earlierError;
    const event: ChatTurnEndEvent = {
      requestId: frame.id,
      ...(frame.messageIds ? { messageIds: frame.messageIds } : {}),
      outcome,
      ...(outcome === "error" && error ? { error } : {}),
      replay: frame.replay
    };
    const status = this.state.status;
    // Our own turn is still settling in the AI SDK: report it once it has.
    if (this.localRequestIds.has(frame.id) && (status === "submitted" || status === "streaming")) {
      this.pendingTurnEnds.push(event);
    } else {
      this.callUser("onTurnEnd", () => this.settings.onTurnEnd?.(event));
    }
  }

  // ─── Resume entry points ──────────────────────────────────────────

  /** Serialized AI SDK resume: every caller shares the running one (#1837). */
  resumeStream(options?: ChatRequestOptions): Promise<void> {
    const active = this.resumeOperation;
    if (active) return active.promise;
    const keptError = this.state.status === "error" ? this.state.error : undefined;
    const operation = { generation: this.resumeGeneration, promise: Promise.resolve(), keptError };
    this.resumeOperation = operation;
    operation.promise = this.chat.resumeStream(options).finally(() => {
      if (this.resumeOperation !== operation || this.resumeGeneration !== operation.generation) return;
      this.resumeOperation = null;
      // A probe that found nothing leaves the error it found until it is cleared or a request starts, as upstream (issue 21, 5).
      if (operation.keptError && this.state.status === "ready" && this.state.error === undefined) {
        this.state.error = operation.keptError;
        this.state.status = "error";
      }
      // An open edge that arrived while this ran is retried, not lost.
      this.tryReconnectProbe();
      this.scheduleReconcile();
    });
    return operation.promise;
  }

  private tryReconnectProbe(): void {
    if (this.disposed || !this.socketOpen || !this.reconnectProbePending) return;
    if (!this.settings.resume) {
      this.reconnectProbePending = false;
      if (this.idleProbeNeeded) {
        this.idleProbeNeeded = false;
        this.idleProbeId = idleProbeIds();
        this.send({ type: Wire.streamResumeRequest, probeId: this.idleProbeId });
      }
      return;
    }
    // A handshake that crossed the disconnect is re-sent, not restarted.
    if (this.transport.retryPendingResume()) {
      this.reconnectProbePending = false;
      return;
    }
    const status = this.state.status;
    if (
      (status !== "ready" && status !== "error") ||
      (this.continuationResuming && this.observedContinuationId === null) ||
      this.resumeOperation !== null
    ) {
      return;
    }
    this.reconnectProbePending = false;
    void this.resumeStream().catch(() => {});
  }

  // ─── Loading and resync ───────────────────────────────────────────

  private startFirstLoad(): void {
    const load = this.config.loadOnOpen;
    if (!load || this.loadStarted) return;
    if (this.config.canRead?.() === false) {
      // No address yet: the chat works as if the history were empty until the read can start (issue 21, 7).
      this.cells.loading.value = false;
      this.resolveLoaded();
      return;
    }
    this.loadStarted = true;
    const epoch = this.transcriptEpoch;
    this.cells.loading.value = true;
    void this.readTranscript(load).then((stored) => {
      if (this.disposed) return;
      if (stored && epoch === this.transcriptEpoch) {
        for (const message of stored) this.knownIds.add(message.id);
        this.replaceAll(prependMissing(stored, this.state.messages));
      }
      // The history must be on screen before `isLoading` says it is.
      this.state.flush();
      this.cells.loading.value = false;
      this.resolveLoaded();
    });
  }

  /**
   * Reads the stored transcript again and merges it in. If `resyncOnReconnect`:
   * after a reconnect, or a turn whose reply this client did not see in full (a
   * resumed or a stopped one). `always`: after a clear (sent, received, or one
   * that interrupted a turn) and after a rewrite that held a message back. An
   * answer that a transcript frame overtook is dropped and the read made again
   * (`attempt` counts them).
   */
  private rereadTranscript(always = false, attempt = 1): void {
    const read = this.storedReader;
    if (!read || (!always && !this.settings.resyncOnReconnect)) return;
    const generation = ++this.resyncGeneration;
    const epoch = this.transcriptEpoch;
    const hold = this.clearHold;
    const frames = this.transcriptFrames;
    void this.readTranscript(read).then((stored) => {
      // A transcript frame came while the read was out: the server may have
      // answered before it sent that frame, and the answer would put back what
      // the frame removed (chaos: many clients). A read made now is as new.
      if (stored && frames !== this.transcriptFrames && !this.disposed) {
        const current = generation === this.resyncGeneration && epoch === this.transcriptEpoch;
        if (current && attempt < MAX_OVERTAKEN_READS) {
          this.rereadTranscript(always, attempt + 1);
          return;
        }
        // Frames keep coming (they carry the transcript; more reads add nothing),
        // or the transcript was replaced since. A newer read in this epoch took
        // the clear's hold over and ends it; otherwise it ends here.
        const takenOver = !current && epoch === this.transcriptEpoch;
        if (hold && this.clearHold === hold && !takenOver) this.clearHold = null;
        return;
      }
      // The read that ends this client's clear's hold may still have reached the agent before
      // the clear did (a caching loader always answers so): what the clear removed, but the
      // interrupted turn's reply, does not come back from it (issue 21, 9). Later frames and
      // reads are the server's word again, old ids included.
      if (hold && this.clearHold === hold) {
        this.clearHold = null;
        if (stored) stored = stored.filter((message) => !hold.cleared.has(message.id));
        if (stored && !this.disposed && epoch === this.transcriptEpoch) this.dropUnconfirmed(hold.arrived, stored);
      }
      if (this.disposed || !stored || generation !== this.resyncGeneration || epoch !== this.transcriptEpoch) {
        return;
      }
      for (const message of stored) this.knownIds.add(message.id);
      stored = this.withoutRetracted(stored);
      let merged: M[];
      try {
        merged = this.settings.mergeMessages(this.withoutUnnamedReplies(stored), stored);
      } catch (error) {
        console.error("[agents-vue] mergeMessages threw; the on-screen transcript is kept.", error);
        return;
      }
      if (!Array.isArray(merged)) {
        console.warn("[agents-vue] mergeMessages must return an array of messages; the on-screen transcript is kept.");
        return;
      }
      this.replaceAll(merged);
      // A reply still streaming (a read after a clear) keeps the place the merge gave it.
      const protection = this.protection;
      const index = protection ? merged.findIndex((message) => message.id === protection.assistantId) : -1;
      if (protection && index >= 0) protection.anchorId = merged[index - 1]?.id ?? null;
    });
  }

  /**
   * A request ended `skipped` after a transcript frame came without its message:
   * the server refused it (`messageConcurrency: "drop"` rolls the submit back
   * with that frame), so the frame wins, as upstream lets it (issue 21, 3).
   */
  private dropRefusedSends(): void {
    const refused = new Set<string>();
    for (const [id, send] of this.unechoedSendIds) if (send.lackedByFrame) refused.add(id);
    for (const id of refused) this.unechoedSendIds.delete(id);
    this.removeMessages((message) => refused.has(message.id));
  }

  /**
   * The screen for a read to merge with: once the stored transcript carries an
   * assistant message the screen lacks, ended replies that streamed without an
   * id give way to it (it is their stored copy, under the server's id; issue 22, 1).
   */
  private withoutUnnamedReplies(stored: readonly M[]): M[] {
    const onScreen = [...this.state.messages];
    if (this.unnamedReplyIds.size === 0) return onScreen;
    const shown = new Set(onScreen.map((message) => message.id));
    if (!stored.some((message) => message.role === "assistant" && !shown.has(message.id))) return onScreen;
    const ended = new Set([...this.unnamedReplyIds].filter((id) => this.protection?.assistantId !== id));
    for (const id of ended) this.unnamedReplyIds.delete(id);
    return onScreen.filter((message) => !ended.has(message.id));
  }

  /** Removes the messages that came from the server during a clear's hold and that the stored transcript lacks. */
  private dropUnconfirmed(arrived: Set<string>, stored: M[]): void {
    if (arrived.size === 0) return;
    const storedIds = new Set(stored.map((message) => message.id));
    this.removeMessages((message) => arrived.has(message.id) && !storedIds.has(message.id));
  }

  /** The reader of read-backs, while it knows where to read. */
  private get storedReader(): TranscriptReader<M> | undefined {
    return this.config.canRead?.() === false ? undefined : this.config.readStored;
  }

  /** Runs a transcript reader; failures were already reported, so they read as nothing. */
  private async readTranscript(read: TranscriptReader<M>): Promise<M[] | null> {
    try {
      const stored = await read();
      if (!Array.isArray(stored)) {
        console.warn(`[agents-vue] The stored transcript of ${this.config.label} is not an array; ignoring it.`);
        return null;
      }
      return stored;
    } catch (error) {
      console.warn(`[agents-vue] Could not read the transcript of ${this.config.label}:`, errorText(error));
      return null;
    }
  }

  // ─── Requests ─────────────────────────────────────────────────────

  private async prepareBody(request: {
    messages: M[];
    trigger: "submit-message" | "regenerate-message";
    messageId?: string;
  }): Promise<Record<string, unknown>> {
    const settings = this.settings;
    this.transport.setCancelOnClientAbort(settings.cancelOnClientAbort);
    let body: Record<string, unknown> = {};
    const source = settings.body;
    if (source) body = { ...(typeof source === "function" ? await source() : source) };
    const clientTools = extractClientToolSchemas(settings.tools);
    if (clientTools) body.clientTools = clientTools;
    if (settings.prepareSendMessagesRequest) {
      const result = await settings.prepareSendMessagesRequest({
        id: this.config.partyKey(),
        messages: request.messages,
        trigger: request.trigger,
        messageId: request.messageId
      });
      if (isRecord(result?.body)) Object.assign(body, result.body);
    }
    if (request.trigger === "regenerate-message" || request.messageId !== undefined) this.settleRewrite();
    if (request.trigger === "submit-message") {
      const sent = request.messages.findLast((message) => message.role === "user");
      if (sent && !this.knownIds.has(sent.id)) this.unechoedSendIds.set(sent.id, { lackedByFrame: false });
    }
    if (settings.sendOnlyNewMessages && request.trigger === "submit-message" && !("messages" in body)) {
      const trimmed = trimForServer(request.messages, this.knownIds, request.messageId);
      if (trimmed.afterMessageId !== undefined) {
        body.messages = trimmed.messages;
        body.afterMessageId = trimmed.afterMessageId;
      }
    }
    return body;
  }

  private rememberFinishedTurn(event: { message: M; messages: M[]; isAbort: boolean; isError: boolean; isDisconnect: boolean }) {
    if (event.isAbort || event.isError || event.isDisconnect || event.message.parts.length === 0) return;
    const index = event.messages.findIndex((message) => message.id === event.message.id);
    if (index < 0) return;
    for (let i = 0; i <= index; i++) this.knownIds.add((event.messages[i] as M).id);
  }

  /**
   * Sends a message. While the socket is down, or the stored transcript is
   * still loading, the message is shown at once and queued: a request carries
   * the whole transcript, and one sent before the history arrived would make
   * the server drop that history. Queued messages go out in order, each after
   * the previous turn settled, so the server stores every question with its answer.
   */
  sendMessage(message?: SendInput<M>, options?: ChatRequestOptions): Promise<void> {
    const isEdit = isRecord(message) && (message as { messageId?: unknown }).messageId != null;
    if (message !== undefined && !isEdit && this.mustQueue()) return this.enqueue(message, options);
    if (isEdit) return this.rewrite(() => this.chat.sendMessage(message, options), String((message as { messageId: unknown }).messageId));
    const request = this.chat.sendMessage(message, options);
    if (message !== undefined && !isEdit) this.protectStreamingTail();
    return request;
  }

  private async enqueue(input: NonNullable<SendInput<M>>, options: ChatRequestOptions | undefined): Promise<void> {
    const message = await this.toUserMessage(input);
    if (this.disposed) return;
    return new Promise<void>((settle) => {
      this.outbox.push({ message, options, settle });
      this.publishOutbox();
      this.scheduleReconcile();
    });
  }

  private async toUserMessage(input: NonNullable<SendInput<M>>): Promise<M> {
    const record = input as Record<string, unknown>;
    let parts: UIMessage["parts"];
    if ("text" in record || "files" in record) {
      const files = record.files as FileList | FileUIPart[] | undefined;
      const fileParts = Array.isArray(files) ? files : await convertFileListToFileUIParts(files);
      parts = [...fileParts, ...(typeof record.text === "string" ? [{ type: "text" as const, text: record.text }] : [])];
    } else {
      parts = (record.parts as UIMessage["parts"]) ?? [];
    }
    const id = typeof record.id === "string" ? record.id : (this.config.chatInit.generateId ?? generateId)();
    return { ...(record as object), id, role: (record.role as string) ?? "user", parts, metadata: record.metadata } as unknown as M;
  }

  private publishOutbox(): void {
    const queued = this.outbox.map((entry) => entry.message);
    this.cells.queued.value = queued;
    this.state.setTail(queued);
  }

  /**
   * Whether a new message must wait in the outbox: the socket is down, the
   * stored transcript is still loading, older queued messages go first, or a
   * turn this client did not start is streaming. The server runs turns one
   * at a time anyway, and a request sent now would carry a partial copy of
   * that reply, which the server would store over the finished one.
   */
  private mustQueue(): boolean {
    return (
      !this.socketOpen ||
      this.cells.loading.value ||
      this.outbox.length > 0 ||
      this.flushingOutbox ||
      this.observer !== null ||
      // A resume (or tool continuation) owns the AI SDK's response until it settles.
      this.resumeOperation !== null
    );
  }

  private flushOutbox(): void {
    if (this.flushingOutbox || this.outbox.length === 0 || !this.socketOpen || this.cells.loading.value) return;
    if (this.observer !== null) return;
    if (this.resumeOperation && !this.continuationResuming && this.transport.isAwaitingResume()) {
      // A resume probe nothing has answered does not hold a send: it ends as "nothing to
      // resume" (a later offer is still followed, as an observed turn), then the send goes (issue 21, 4).
      this.resumeOperation.keptError = undefined;
      this.transport.cancelPendingResume();
      return;
    }
    const status = this.state.status;
    if (status === "submitted" || status === "streaming" || this.resumeOperation || this.continuationResuming) return;
    const entry = this.outbox.shift();
    if (!entry) return;
    this.flushingOutbox = true;
    this.publishOutbox();
    const request = this.chat.sendMessage(entry.message as unknown as CreateUIMessage<M>, entry.options);
    void request.finally(() => {
      this.flushingOutbox = false;
      entry.settle();
      this.scheduleReconcile();
    });
  }

  private failOutbox(): void {
    if (this.outbox.length === 0) return;
    this.warnLimited(
      "outbox",
      `${this.outbox.length} message(s) wait for ${this.config.label}, whose connection closed for good; they stay queued until it reconnects.`
    );
  }

  /** Clears the error and returns to `ready`; a probe still running no longer puts the error back. */
  clearError(): void {
    if (this.resumeOperation) this.resumeOperation.keptError = undefined;
    this.chat.clearError();
  }

  /** Regenerates an assistant message (full transcript, `regenerate-message`). */
  regenerate(options?: Parameters<AbstractChat<M>["regenerate"]>[0]): Promise<void> {
    return this.rewrite(() => this.chat.regenerate(options));
  }

  /** Stops the local stream and cancels the server turn it follows, whatever `cancelOnClientAbort` says. */
  async stop(): Promise<void> {
    this.transport.setCancelOnClientAbort(this.settings.cancelOnClientAbort);
    const unattachedContinuation =
      this.continuationResuming && !this.continuationAttached && this.observedContinuationId === null;
    for (const id of this.localRequestIds) this.stoppedRequestIds.add(id);
    capSet(this.stoppedRequestIds, MAX_REMEMBERED_TURNS);
    try {
      this.transport.cancelActiveServerTurn();
      await this.chat.stop();
    } finally {
      this.transport.abortActiveToolContinuation();
      // The continuation is over once stop() returns (its stream settles a tick later).
      if (unattachedContinuation) this.cancelContinuationWhenItStarts();
      else if (this.continuationResuming) this.resetToolContinuation();
    }
  }

  /**
   * Clears the transcript here and on the server. `AIChatAgent` aborts a
   * running turn on a clear and can store that turn's partial reply after it
   * emptied the transcript, so a clear that interrupts a turn re-reads the
   * stored transcript when the turn ends (receivers of the clear read at once).
   * The server does not echo the clear to this client, so it reads once at
   * once too, and until that read answers drops the cleared messages from
   * broadcasts the server sent before it took the clear.
   */
  clearHistory(): void {
    const status = this.state.status;
    this.clearedDuringTurn =
      status === "submitted" || status === "streaming" || this.observer !== null || this.transport.activeServerTurnId !== null;
    const cleared = new Set(this.state.messages.map((message) => message.id));
    // The server stores the interrupted turn's partial reply after it empties the transcript:
    // that one message may come back (see `rereadTranscript`).
    const activeTurn = this.transport.activeServerTurnId;
    const interruptedReply = this.observer?.message.id ?? (activeTurn === null ? undefined : this.localResponseIds.get(activeTurn));
    if (interruptedReply !== undefined) cleared.delete(interruptedReply);
    this.resetLocalState();
    this.send({ type: Wire.chatClear });
    // Hold back what the clear removed until a read confirms it (a read needs
    // a reader, and an open socket so that the clear reaches the server first).
    this.clearHold =
      cleared.size > 0 && this.socketOpen && this.storedReader ? { cleared, arrived: new Set() } : null;
    if (this.clearHold) this.rereadTranscript(true);
  }

  /** Replaces the transcript and, unless `syncMessagesToServer` is off, the server's copy. */
  setMessages(next: M[] | ((current: M[]) => M[])): void {
    const resolved = typeof next === "function" ? next([...this.state.messages]) : next;
    if (!Array.isArray(resolved)) {
      console.warn("[agents-vue] setMessages needs an array of messages; nothing changed.");
      return;
    }
    // A later transcript read must not put back what this edit removed.
    this.transcriptEpoch++;
    if (this.settings.syncMessagesToServer) {
      this.send({ type: Wire.chatMessages, messages: resolved });
      this.knownIds.clear();
      for (const message of resolved) this.knownIds.add(message.id);
    }
    this.state.messages = [...resolved];
  }

  private resetLocalState(): void {
    this.transcriptEpoch++;
    this.state.messages = [];
    this.toolResults.clear();
    this.runningToolCalls.clear();
    this.cells.runningToolCalls.value = new Set();
    this.resetToolContinuation();
    // processedToolCalls stays: a call this client ran never runs again (issue 21, 9).
    this.localResponseIds.clear();
    this.pendingReplayResume.clear();
    this.fallbackAcked.clear();
    this.replayRebuiltIds.clear();
    this.unsequencedReplayIds.clear();
    this.unnamedReplyIds.clear();
    this.ackedUnreplayed.clear();
    this.stoppedRequestIds.clear();
    this.rewriteInFlight = null;
    this.protection = null;
    this.bufferedSendIds.clear();
    this.unechoedSendIds.clear();
    this.transport.appliedChunks.clear();
    this.turnErrors.clear();
    this.pendingTurnEnds = [];
    this.knownIds.clear();
    const dropped = this.outbox.splice(0);
    for (const entry of dropped) entry.settle();
    if (dropped.length > 0) this.publishOutbox();
  }

  // ─── Tools ────────────────────────────────────────────────────────

  /** Answers a tool call: the server gets a `cf_agent_tool_result`, the part updates in place. */
  addToolOutput(options: AddToolOutputOptions): void {
    const toolName = options.toolName ?? this.toolNameOf(options.toolCallId) ?? "";
    this.sendToolOutput(options.toolCallId, toolName, options.output, options.state, options.errorText);
    const failed = options.state === "output-error";
    void Promise.resolve(
      this.chat.addToolOutput(
        failed
          ? {
              state: "output-error",
              tool: toolName as never,
              toolCallId: options.toolCallId,
              errorText: options.errorText ?? "Tool execution denied by user"
            }
          : { tool: toolName as never, toolCallId: options.toolCallId, output: options.output as never }
      )
    ).catch((error: unknown) => console.warn("[agents-vue] Could not apply a tool output locally:", errorText(error)));
  }

  /** @deprecated upstream's `addToolResult`: sends the output and, with auto-continue off, resubmits. */
  addToolResult(args: { tool?: string; toolCallId: string; output?: unknown }): void {
    const toolName = args.tool ?? this.toolNameOf(args.toolCallId) ?? "";
    const autoContinue = this.settings.autoContinueAfterToolResult;
    this.send({
      type: Wire.toolResult,
      toolCallId: args.toolCallId,
      toolName,
      output: args.output,
      autoContinue,
      clientTools: extractClientToolSchemas(this.settings.tools)
    });
    this.setToolResult(args.toolCallId, args.output);
    void Promise.resolve(
      this.chat.addToolOutput({ tool: toolName as never, toolCallId: args.toolCallId, output: args.output as never })
    ).catch(() => {});
    if (autoContinue) {
      this.startToolContinuation();
      return;
    }
    if (!this.settings.autoSendAfterAllConfirmationsResolved) {
      void this.sendMessage();
      return;
    }
    const waiting = this.confirmationsWaiting();
    waiting.delete(args.toolCallId);
    if (waiting.size === 0) void this.sendMessage();
  }

  private confirmationsWaiting(): Set<string> {
    const requiring = this.settings.toolsRequiringConfirmation;
    const ids = new Set<string>();
    for (const part of pendingToolParts(this.state.messages)) {
      if (requiring.includes(getToolName(part)) && !this.toolResults.has(part.toolCallId)) ids.add(part.toolCallId);
    }
    return ids;
  }

  /** Answers an approval request; with no matching part it warns and sends nothing. */
  addToolApprovalResponse(args: Parameters<AbstractChat<M>["addToolApprovalResponse"]>[0]): Promise<void> {
    let toolCallId: string | undefined;
    for (const message of this.state.messages) {
      for (const part of message.parts) {
        const approval = (part as { approval?: { id?: unknown } }).approval;
        if (isToolUIPart(part) && approval?.id === args.id) {
          toolCallId = part.toolCallId;
          break;
        }
      }
      if (toolCallId) break;
    }
    if (toolCallId) {
      const autoContinue = this.settings.autoContinueAfterToolResult;
      this.send({ type: Wire.toolApproval, toolCallId, approved: args.approved, autoContinue });
      if (autoContinue) this.startToolContinuation();
    } else {
      console.warn(
        `[agents-vue] addToolApprovalResponse: no tool part awaits approval "${args.id}"; nothing was sent to the server.`
      );
    }
    return Promise.resolve(this.chat.addToolApprovalResponse(args));
  }

  private toolNameOf(toolCallId: string): string | undefined {
    for (let i = this.state.messages.length - 1; i >= 0; i--) {
      for (const part of (this.state.messages[i] as M).parts) {
        if (isToolUIPart(part) && part.toolCallId === toolCallId) return getToolName(part);
      }
    }
    return undefined;
  }

  private sendToolOutput(
    toolCallId: string,
    toolName: string,
    output: unknown,
    state?: "output-available" | "output-error",
    errorTextValue?: string
  ): void {
    // An error is a deliberate client action: the server does not auto-continue.
    const autoContinue = state === "output-error" ? false : this.settings.autoContinueAfterToolResult;
    this.send({
      type: Wire.toolResult,
      toolCallId,
      toolName,
      output,
      ...(state ? { state } : {}),
      ...(errorTextValue !== undefined ? { errorText: errorTextValue } : {}),
      autoContinue,
      clientTools: extractClientToolSchemas(this.settings.tools)
    });
    if (state !== "output-error") this.setToolResult(toolCallId, output);
    if (autoContinue) this.startToolContinuation();
  }

  private setToolResult(toolCallId: string, output: unknown): void {
    this.toolResults.set(toolCallId, output);
    this.state.invalidate((message) => message.parts.some((part) => (part as { toolCallId?: string }).toolCallId === toolCallId));
  }

  /** The client tool-result overlay (#728): answered calls show their output at once. */
  private withToolResults(message: M): M {
    if (this.toolResults.size === 0) return message;
    let changed = false;
    const parts = message.parts.map((part) => {
      const call = part as { toolCallId?: string; state?: string };
      if (!call.toolCallId || call.state !== "input-available" || !this.toolResults.has(call.toolCallId)) return part;
      changed = true;
      return { ...part, state: "output-available", output: this.toolResults.get(call.toolCallId) } as typeof part;
    });
    return changed ? ({ ...message, parts } as M) : message;
  }

  // ─── Where a streamed reply lands ─────────────────────────────────

  /**
   * The chat state as the AI SDK sees it: the publishing state, except that
   * the messages it writes while a reply streams go through `placeResponse`.
   */
  private chatFacingState(): ChatState<M> {
    const state = this.state;
    return {
      get status() {
        return state.status;
      },
      set status(status: ChatStatus) {
        state.status = status;
      },
      get error() {
        return state.error;
      },
      set error(error: Error | undefined) {
        state.error = error;
      },
      get messages() {
        return state.messages;
      },
      set messages(next: M[]) {
        state.messages = next;
      },
      pushMessage: (message: M) => this.placeResponse(message),
      popMessage: () => state.popMessage(),
      replaceMessage: (index: number, message: M) => this.placeResponse(message, index),
      snapshot: state.snapshot
    };
  }

  /**
   * Places a message the AI SDK writes (`index` undefined: it would append).
   *
   * - A continuation's chunks carry no message id: the server strips it so
   *   the client extends the message the tool call is in (#1229). The AI SDK
   *   (ai@7) starts a fresh message for a resumed stream unless the last one
   *   awaits an approval, so its writes are merged into the pinned message.
   * - A bare `sendMessage()` after a tool output makes the AI SDK seed the
   *   reply with the last assistant's parts, but AIChatAgent answers it as a
   *   new turn under a new id and stores only the new parts; the seeded copy
   *   is dropped so the transcript matches the server's.
   */
  private placeResponse(message: M, index?: number): void {
    let placed = message;
    const drop = this.reseededReplies.get(message.id);
    if (drop !== undefined) {
      placed = { ...message, parts: message.parts.slice(drop) };
    } else if (this.continuationPin && message.role === "assistant") {
      if (this.mergeIntoPinned(this.continuationPin, message, index)) return;
    } else if (index === undefined) {
      const seeded = this.seededParts(message);
      if (seeded > 0) {
        this.reseededReplies.set(message.id, seeded);
        capMap(this.reseededReplies, MAX_REMEMBERED_TURNS);
        placed = { ...message, parts: message.parts.slice(seeded) };
      }
    }
    if (index === undefined) {
      this.state.pushMessage(placed);
      this.protectUnnamedReply(placed);
    } else this.state.replaceMessage(index, placed);
  }

  /**
   * The reply the AI SDK appends for a local request whose stream named no
   * message id (a plain-text `Response` streams no `start`) is protected like
   * any live reply. The server stores it under an id of its own, so once its
   * turn ends the stored copy replaces it (issue 22, 1).
   */
  private protectUnnamedReply(reply: M): void {
    const requestId = this.transport.activeServerTurnId;
    if (reply.role !== "assistant" || requestId === null) return;
    if (!this.localRequestIds.has(requestId) || this.localResponseIds.has(requestId)) return;
    this.localResponseIds.set(requestId, reply.id);
    this.unnamedReplyIds.add(reply.id);
    const messages = this.state.messages;
    const anchorId = this.cells.loading.value ? undefined : (messages[messages.length - 2]?.id ?? null);
    this.protection = { assistantId: reply.id, anchorId };
  }

  private mergeIntoPinned(pin: ContinuationPin<M>, message: M, index: number | undefined): boolean {
    // A replace of another message (e.g. an output added to an older call) is not the reply.
    if (index !== undefined && message.id !== pin.id) return false;
    const messages = this.state.messages;
    let target = messages.findIndex((candidate) => candidate.id === pin.id);
    if (target < 0 && pin.toolCallIds.size > 0) {
      // A broadcast renamed the pinned message: find it by its tool calls.
      target = messages.findIndex((candidate) => toolCallIdsOf(candidate).some((id) => pin.toolCallIds.has(id)));
    }
    const pinned = messages[target];
    if (!pinned) return false;
    pin.id = pinned.id;
    // The AI SDK resumed the pinned message itself (it awaited an approval): its parts are all there.
    const continuesPinned = toolCallIdsOf(message).some((id) => pin.toolCallIds.has(id));
    let base: Array<Part<M>> = [];
    if (!continuesPinned) {
      base = pin.bases.get(message.id) ?? pinned.parts;
      pin.bases.set(message.id, base);
    }
    const metadata =
      isRecord(pinned.metadata) && isRecord(message.metadata)
        ? { ...pinned.metadata, ...message.metadata }
        : (message.metadata ?? pinned.metadata);
    const parts = pin.resumesText && !continuesPinned ? joinResumedText(base, message.parts) : [...base, ...message.parts];
    this.state.replaceMessage(target, { ...pinned, ...message, id: pinned.id, metadata, parts });
    return true;
  }

  /** How many leading parts of a new reply are a copy of the assistant before it. */
  private seededParts(message: M): number {
    if (message.role !== "assistant") return 0;
    const last = this.state.messages[this.state.messages.length - 1];
    if (!last || last.role !== "assistant" || last.id === message.id || last.parts.length === 0) return 0;
    if (message.parts.length < last.parts.length) return 0;
    return last.parts.every((part, i) => samePart(part, message.parts[i])) ? last.parts.length : 0;
  }

  /** Pins the last assistant message as the one a continuation extends. */
  private pinContinuation(): void {
    if (this.continuationPin) return;
    const last = this.state.messages[this.state.messages.length - 1];
    if (!last || last.role !== "assistant") return;
    this.continuationPin = { id: last.id, toolCallIds: new Set(toolCallIdsOf(last)), bases: new Map() };
  }

  /** Once no continuation streams, nothing is pinned (a renamed reply is forgotten at its finish). */
  private releaseResponsePlacement(): void {
    const status = this.state.status;
    if (status === "submitted" || status === "streaming") return;
    if (!this.resumeOperation && !this.continuationPending) this.continuationPin = null;
  }

  private startToolContinuation(): void {
    if (!this.settings.autoContinueAfterToolResult) return;
    // A new result asks for the continuation again, even after a stop.
    this.stoppedContinuation = null;
    if (this.continuationResuming) return;
    this.continuationGeneration++;
    this.continuationResuming = true;
    this.continuationPending = true;
    this.cells.toolContinuation.value = true;
    this.scheduleContinuationLaunch();
  }

  private scheduleContinuationLaunch(): void {
    if (!this.continuationPending || this.state.status !== "ready" || this.continuationTimer) return;
    const timer = setTimeout(() => {
      void (async () => {
        // A resume may still own the AI SDK's active response.
        while (this.resumeOperation) await this.resumeOperation.promise.catch(() => {});
        if (this.continuationTimer === timer) this.continuationTimer = null;
        if (this.disposed || !this.continuationPending || this.state.status !== "ready") return;
        this.continuationPending = false;
        const generation = this.continuationGeneration;
        this.pinContinuation();
        this.transport.expectToolContinuation();
        await this.resumeStream()
          .catch((error: unknown) => console.error("[agents-vue] Tool continuation failed:", error))
          .finally(() => {
            if (this.continuationGeneration !== generation) return;
            this.continuationResuming = false;
            this.continuationRequestId = null;
            this.continuationAttached = false;
            this.cells.toolContinuation.value = false;
            this.scheduleReconcile();
          });
      })();
    }, 0);
    this.continuationTimer = timer;
  }

  private clearContinuationTimer(): void {
    if (this.continuationTimer) clearTimeout(this.continuationTimer);
    this.continuationTimer = null;
  }

  private resetToolContinuation(): void {
    this.continuationGeneration++;
    this.continuationPending = false;
    this.continuationResuming = false;
    this.observedContinuationId = null;
    this.continuationRequestId = null;
    this.continuationAttached = false;
    this.stoppedContinuation = null;
    this.clearContinuationTimer();
    this.cells.toolContinuation.value = false;
  }

  /** The server named the continuation its probe waits for (`cf_agent_stream_pending` carries the id). */
  private noteContinuationPending(id: string | undefined, probeId: string | undefined): void {
    const stopped = this.stoppedContinuation;
    // Any of the stopped continuation's probes may name it (issue 22, 3).
    if (stopped && probeId !== undefined) {
      stopped.requestId = id ?? stopped.requestId;
      return;
    }
    if (id && this.continuationResuming && !this.continuationPending && !this.continuationAttached) {
      this.continuationRequestId = id;
    }
  }

  /** The transport took a stream offer while a continuation was launched: that is the continuation. */
  private noteContinuationAttached(id: string): void {
    if (!this.continuationResuming || this.continuationPending) return;
    this.continuationRequestId = id;
    this.continuationAttached = true;
  }

  /**
   * `stop()` before the server started the continuation: the transport has
   * no request id to cancel, and the server can only abort a turn that runs.
   * The client asks which turn is pending (its own probe parks it for the
   * start) and cancels that turn when the server announces it, never ACKing
   * it. Upstream leaves such a continuation running.
   */
  private cancelContinuationWhenItStarts(): void {
    const requestId = this.continuationRequestId;
    this.resetToolContinuation();
    const probeId = idleProbeIds();
    this.stoppedContinuation = { probeId, requestId };
    this.send({ type: Wire.streamResumeRequest, probeId });
  }

  private cancelStoppedContinuation(id: string, probeId: string | undefined): boolean {
    const stopped = this.stoppedContinuation;
    if (!stopped) return false;
    // Its own request id once known; before that, whatever answers one of its
    // probes (the launch's answer may still be on its way, issue 22, 3), unless
    // that is a turn this client already follows (another tab's).
    const isStopped =
      stopped.requestId !== null
        ? id === stopped.requestId
        : probeId !== undefined && this.observer?.streamId !== id && !this.localRequestIds.has(id);
    if (!isStopped) return false;
    this.stoppedContinuation = null;
    this.stoppedRequestIds.add(id);
    capSet(this.stoppedRequestIds, MAX_REMEMBERED_TURNS);
    this.send({ type: Wire.requestCancel, id });
    this.scheduleReconcile();
    return true;
  }

  /**
   * A tool call streamed in another client's turn is that client's to answer:
   * running it here too would run a tool with `execute` once per open tab and
   * send the server two results. (Upstream runs it in every tab.) Calls this
   * client loads from the transcript, or gets in its own or a resumed stream,
   * are its own.
   */
  private noteOthersToolCall(chunk: Record<string, unknown>): void {
    if (chunk.type !== "tool-input-start" && chunk.type !== "tool-input-available") return;
    if (typeof chunk.toolCallId !== "string") return;
    this.othersToolCalls.add(chunk.toolCallId);
    capSet(this.othersToolCalls, MAX_REMEMBERED_TURNS);
  }

  /**
   * Runs client tools once the response has ended (#2195): a server tool
   * sits in `input-available` until its result arrives in the same stream, so
   * only what is still waiting afterwards belongs to the client.
   */
  private runPendingToolCalls(): void {
    const settings = this.settings;
    const status = this.state.status;
    if (
      status === "streaming" ||
      status === "submitted" ||
      this.cells.serverStreaming.value ||
      this.unresolvedObservedRequestId !== null ||
      this.recoveringRequestId !== null
    ) {
      return;
    }
    for (const part of pendingToolParts(this.state.messages)) {
      const toolCallId = part.toolCallId;
      if (this.processedToolCalls.has(toolCallId) || this.toolResults.has(toolCallId)) continue;
      if (this.othersToolCalls.has(toolCallId)) continue;
      const toolName = getToolName(part);
      const tool = settings.tools?.[toolName];
      if (typeof tool?.execute === "function") {
        if (settings.automaticToolResolution) continue; // the deprecated path owns these
        this.claimToolCall(toolCallId);
        this.runClientTool(toolCallId, toolName, part.input, tool.execute);
        continue;
      }
      const onToolCall = settings.onToolCall;
      if (!onToolCall) continue;
      this.claimToolCall(toolCallId);
      this.markRunning(toolCallId, true);
      let result: ReturnType<OnToolCallCallback>;
      try {
        result = onToolCall({
          toolCall: { toolCallId, toolName, input: part.input },
          addToolOutput: (options) => this.addToolOutput({ ...options, toolName })
        });
      } catch (error) {
        this.markRunning(toolCallId, false);
        console.error(`[agents-vue] onToolCall threw for "${toolName}":`, error);
        continue;
      }
      void Promise.resolve(result)
        .catch((error: unknown) => console.error(`[agents-vue] onToolCall rejected for "${toolName}":`, error))
        .finally(() => this.markRunning(toolCallId, false));
    }
  }

  /** A tool call runs at most once per session, even if a read brings its message back after a clear (issue 21, 9). */
  private claimToolCall(toolCallId: string): void {
    this.processedToolCalls.add(toolCallId);
    capSet(this.processedToolCalls, MAX_REMEMBERED_TURNS);
  }

  private runClientTool(
    toolCallId: string,
    toolName: string,
    input: unknown,
    execute: NonNullable<AITool["execute"]>
  ): void {
    this.markRunning(toolCallId, true);
    void (async () => {
      try {
        const output = await execute(input);
        if (!this.disposed) this.addToolOutput({ toolCallId, toolName, output });
      } catch (error) {
        if (!this.disposed) {
          this.addToolOutput({ toolCallId, toolName, state: "output-error", errorText: errorText(error) });
        }
      } finally {
        this.markRunning(toolCallId, false);
      }
    })();
  }

  private markRunning(toolCallId: string, running: boolean): void {
    if (running === this.runningToolCalls.has(toolCallId)) return;
    if (running) this.runningToolCalls.add(toolCallId);
    else this.runningToolCalls.delete(toolCallId);
    this.cells.runningToolCalls.value = new Set(this.runningToolCalls);
  }

  /** The deprecated `experimental_automaticToolResolution`: runs tools with `execute` in order. */
  private resolveToolsAutomatically(): void {
    const settings = this.settings;
    if (!settings.automaticToolResolution || this.resolvingTools) return;
    const tools = settings.tools;
    const calls = pendingToolParts(this.state.messages).filter((part) => {
      const name = getToolName(part);
      return (
        !this.processedToolCalls.has(part.toolCallId) &&
        !this.othersToolCalls.has(part.toolCallId) &&
        !settings.toolsRequiringConfirmation.includes(name) &&
        typeof tools?.[name]?.execute === "function"
      );
    });
    if (calls.length === 0) return;
    this.resolvingTools = true;
    void (async () => {
      try {
        const results: Array<{ toolCallId: string; toolName: string; output: unknown }> = [];
        for (const part of calls) {
          const toolName = getToolName(part);
          let output: unknown = null;
          const execute = tools?.[toolName]?.execute;
          if (execute && part.input !== undefined) {
            try {
              output = await execute(part.input);
            } catch (error) {
              output = `Error executing tool: ${errorText(error)}`;
            }
          }
          this.claimToolCall(part.toolCallId);
          results.push({ toolCallId: part.toolCallId, toolName, output });
        }
        if (this.disposed) return;
        const clientTools = extractClientToolSchemas(tools);
        for (const result of results) {
          this.send({
            type: Wire.toolResult,
            ...result,
            autoContinue: this.settings.autoContinueAfterToolResult,
            clientTools
          });
        }
        await Promise.all(
          results.map((result) =>
            this.chat.addToolOutput({ tool: result.toolName as never, toolCallId: result.toolCallId, output: result.output as never })
          )
        );
        for (const result of results) this.setToolResult(result.toolCallId, result.output);
        this.startToolContinuation();
      } finally {
        this.resolvingTools = false;
        this.scheduleReconcile();
      }
    })();
  }

  // ─── Reconcile (what React runs as effects) ───────────────────────

  private scheduleReconcile(): void {
    if (this.reconcileQueued || this.disposed) return;
    this.reconcileQueued = true;
    queueMicrotask(() => {
      this.reconcileQueued = false;
      if (!this.disposed) this.reconcile();
    });
  }

  private reconcile(): void {
    const status = this.state.status;
    if (status !== this.lastStatus) {
      this.lastStatus = status;
      // Server turns are serialized: our own request now gates tool calls.
      if (status === "submitted") {
        this.unresolvedObservedRequestId = null;
        this.recoveringRequestId = null;
      }
    }
    const settled = status !== "submitted" && status !== "streaming";
    if (settled && this.pendingTurnEnds.length > 0) {
      const events = this.pendingTurnEnds;
      this.pendingTurnEnds = [];
      for (const event of events) this.callUser("onTurnEnd", () => this.settings.onTurnEnd?.(event));
    }
    if (status === "error" && this.continuationPending) this.resetToolContinuation();
    else this.scheduleContinuationLaunch();
    this.tryReconnectProbe();
    if (settled && this.observer === null) this.dropEmptyReplies();
    if (settled) {
      this.runPendingToolCalls();
      this.resolveToolsAutomatically();
      this.flushOutbox();
    }
    this.collapseReplays();
    this.pruneToolBookkeeping();
    this.releaseResponsePlacement();
  }

  private dropEmptyReplies(): void {
    if (this.endedReplyIds.size === 0) return;
    const ended = this.endedReplyIds;
    this.endedReplyIds = new Set();
    this.removeMessages((message) => ended.has(message.id) && message.role === "assistant" && message.parts.length === 0);
  }

  private collapseReplays(): void {
    for (const id of this.unsequencedReplayIds) this.collapseMessage(id);
    if (this.replayRebuiltIds.size === 0) return;
    const messages = this.state.messages;
    messages.forEach((message, index) => {
      if (message.role !== "assistant" || !this.replayRebuiltIds.has(message.id)) return;
      const collapsed = collapseReplayedText(message);
      if (collapsed !== message) this.state.replaceMessage(index, collapsed);
    });
    if (this.state.status === "ready" || this.state.status === "error") this.replayRebuiltIds.clear();
  }

  private collapseMessage(id: string): void {
    const index = this.state.messages.findIndex((message) => message.id === id);
    const message = this.state.messages[index];
    if (!message || message.role !== "assistant") return;
    const collapsed = collapseReplayedText(message);
    if (collapsed !== message) this.state.replaceMessage(index, collapsed);
  }

  private pruneToolBookkeeping(): void {
    if (this.toolResults.size === 0) return;
    const status = this.state.status;
    if (status === "streaming" || status === "submitted") return;
    const present = new Set<string>();
    for (const message of this.state.messages) {
      for (const part of message.parts) {
        const id = (part as { toolCallId?: unknown }).toolCallId;
        if (typeof id === "string") present.add(id);
      }
    }
    for (const id of this.toolResults.keys()) if (!present.has(id)) this.toolResults.delete(id);
  }

  // ─── Helpers ──────────────────────────────────────────────────────

  private send(frame: Record<string, unknown>): void {
    try {
      this.config.socket.send(JSON.stringify(frame));
    } catch (error) {
      console.warn(`[agents-vue] Could not send ${String(frame.type)}:`, errorText(error));
    }
  }

  private callUser(name: string, run: () => void): void {
    try {
      run();
    } catch (error) {
      console.error(`[agents-vue] ${name} threw:`, error);
    }
  }

  private warnLimited(key: string, message: string): void {
    const count = this.warned.get(key) ?? 0;
    if (count >= 5) return;
    this.warned.set(key, count + 1);
    console.warn(`[agents-vue] ${message}${count === 4 ? " (further warnings like this are muted)" : ""}`);
  }

  /**
   * Ends the session: listeners and timers go, local streams stop without
   * cancelling the server turn (unless `cancelOnClientAbort`), and an owned
   * socket closes.
   */
  dispose(): void {
    if (this.disposed) return;
    const settings = this.settings;
    const activeTurn = this.transport.activeServerTurnId;
    if (settings.cancelOnClientAbort) {
      // A local abort cancels the turn this client follows as its own: its request, a resumed
      // stream, or a tool continuation, attached or observed (issue 22, 2). Now: an owned socket closes below.
      const ownTurn = activeTurn !== null && (this.localRequestIds.has(activeTurn) || activeTurn === this.observedContinuationId);
      if (ownTurn) this.transport.cancelActiveServerTurn();
      else this.transport.abortActiveToolContinuation();
    }
    if (this.outbox.length > 0) {
      console.warn(
        `[agents-vue] ${this.outbox.length} queued message(s) for ${this.config.label} were not sent: the chat closed before the connection came back.`
      );
    }
    this.disposed = true;
    this.transport.setCancelOnClientAbort(settings.cancelOnClientAbort);
    void this.chat.stop().catch(() => {});
    this.transport.resetResumeState();
    this.resumeGeneration++;
    this.resumeOperation = null;
    this.clearContinuationTimer();
    this.state.dispose();
    this.bridge.dispose();
    for (const entry of this.outbox.splice(0)) entry.settle();
    if (this.config.ownsSocket) this.config.socket.close?.();
  }

  /** Test and benchmark hook: live listeners and timers this session holds. */
  get debugCounts(): { streamListeners: number; continuationTimer: boolean; disposed: boolean } {
    return {
      streamListeners: this.bridge.streamListenerCount,
      continuationTimer: this.continuationTimer !== null,
      disposed: this.disposed
    };
  }
}

function describeData(data: unknown): string {
  if (typeof data === "string") return `${data.length} characters`;
  if (data instanceof ArrayBuffer) return `${data.byteLength} bytes of binary`;
  return typeof data;
}

function toolCallIdsOf(message: UIMessage): string[] {
  return message.parts.flatMap((part) => {
    const id = (part as { toolCallId?: unknown }).toolCallId;
    return typeof id === "string" ? [id] : [];
  });
}

/**
 * The pinned parts followed by a continuation's, where the continuation's
 * first text part extends the pinned message's last text part when that one
 * was still streaming (the server appended the deltas there).
 */
function joinResumedText<P extends UIMessage["parts"][number]>(base: P[], added: P[]): P[] {
  const at = base.findLastIndex((part) => part.type === "text");
  const first = added.findIndex((part) => part.type === "text");
  const interrupted = base[at] as { type: "text"; text: string; state?: string } | undefined;
  const resumed = added[first] as { type: "text"; text: string; state?: string } | undefined;
  if (!interrupted || !resumed || interrupted.state !== "streaming") return [...base, ...added];
  const joined = { ...interrupted, text: interrupted.text + resumed.text, state: resumed.state } as P;
  return [...base.slice(0, at), joined, ...base.slice(at + 1), ...added.slice(0, first), ...added.slice(first + 1)];
}

/** Whether two parts are the same part (states may differ: a tool call may have been answered since). */
function samePart(a: UIMessage["parts"][number], b: UIMessage["parts"][number] | undefined): boolean {
  if (!b || a.type !== b.type) return false;
  const callA = (a as { toolCallId?: unknown }).toolCallId;
  if (callA !== undefined || (b as { toolCallId?: unknown }).toolCallId !== undefined) {
    return callA === (b as { toolCallId?: unknown }).toolCallId;
  }
  if (a.type === "text" || a.type === "reasoning") return a.text === (b as { text: string }).text;
  return true;
}
