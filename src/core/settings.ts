import type { ChatInit, ChatStatus, UIMessage } from "ai";
import type { Cell } from "./chat-state";
import type { AgentSocket, ConnectionStatus } from "./connection";
import type { ChatPersistence } from "./persistence";

export type { ConnectionStatus };
import type { ChatTurnEndEvent } from "./protocol";
import type { AITool } from "./tools";


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
  experimental_automaticToolResolution: boolean;
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
  /** The AI SDK's own queue (`experimental_queue`): messages it holds until this tab's turn settles. */
  sdkQueued?: Cell<M[]>;
  /** A cached transcript is on screen (`persist`), until the server's arrives. */
  cached?: Cell<boolean>;
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
  /** The agent class at its host (not the instance): what the session remembers servers by. */
  agentKey?: string;
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
  /** Keeps the transcript and queued sends across page loads (`persist`), under `persistKey`. */
  persist?: ChatPersistence;
  persistKey?: string;
}
