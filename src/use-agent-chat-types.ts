import type { AbstractChat, ChatRequestOptions, ChatStatus, UIMessage } from "ai";
import type { AgentClientOptions } from "agents/client";
import type { ComputedRef, MaybeRefOrGetter, ShallowRef } from "vue";
import type { SubAgentStep } from "./core/address";
import type { ChatOptions } from "./core/chat";
import type { AgentSocket } from "./core/connection";
import type { AddToolOutputOptions, ConnectionStatus } from "./core/session";
import type { SharedAgentConnection } from "./shared-connection";

/**
 * Where the composable connects when it owns the socket. Every field may be a
 * ref or a getter: changing `agent`, `name`, `host`, `basePath`, `path` or
 * `sub` switches the chat to that conversation without remounting; changing
 * only `query` (a rotated token) reconnects the same conversation.
 */
export interface AgentChatClientOptions
  extends Omit<AgentClientOptions, "agent" | "name" | "host" | "basePath" | "path" | "query"> {
  /** The agent class name, e.g. `"ChatAgent"` (kebab-cased in the URL). */
  agent: MaybeRefOrGetter<string>;
  /** The Durable Object instance (the conversation). Defaults to `"default"`. */
  name?: MaybeRefOrGetter<string | undefined>;
  /** The worker's host, e.g. `"my-app.workers.dev"`. Defaults to the page's host. */
  host?: MaybeRefOrGetter<string | undefined>;
  /** A custom route instead of `/agents/<agent>/<name>`. */
  basePath?: MaybeRefOrGetter<string | undefined>;
  /** A path appended to the agent's URL (after the `sub` chain). */
  path?: MaybeRefOrGetter<string | undefined>;
  /**
   * Chat with a sub-agent of `agent`/`name`, root first:
   * `[{ agent: "ChatAgent", name: "abc" }]` connects to
   * `/agents/<agent>/<name>/sub/chat-agent/abc` (the conversation is the last step).
   */
  sub?: MaybeRefOrGetter<ReadonlyArray<SubAgentStep> | undefined>;
  /** Query parameters of the WebSocket URL (e.g. an auth token), or a function returning them. */
  query?: MaybeRefOrGetter<Record<string, string | null | undefined> | undefined> | (() => Promise<Record<string, string | null | undefined>>);
}

export type { SharedAgentConnection } from "./shared-connection";

export type { ChatOptions, ForwardedChatInit } from "./core/chat";

/** Options of {@link useAgentChat}. */
export interface UseAgentChatOptions<M extends UIMessage = UIMessage> extends ChatOptions<M> {
  /** Connection options: the composable opens its own socket and closes it on unmount. */
  client?: AgentChatClientOptions;
  /** A connection the app owns (e.g. from `useAgent`); it is never closed by this composable. */
  agent?: MaybeRefOrGetter<SharedAgentConnection | null | undefined>;
  /** Extra request body: an object, a function (read at send time) or a ref. */
  body?: MaybeRefOrGetter<Record<string, unknown> | Promise<Record<string, unknown>> | undefined>;
}

/**
 * The chat object: the AI SDK chat surface with WebSocket-aware methods.
 * Its `messages`, `status` and `error` are reactive in templates and effects.
 */
export interface AgentChat<M extends UIMessage = UIMessage> {
  /** The chat id (derived from the agent's address). */
  readonly id: string;
  /** The transcript. Assigning it works like `setMessages`. */
  messages: M[];
  /** `submitted`, `streaming`, `ready` or `error`. */
  readonly status: ChatStatus;
  /** The last request's error, if any. */
  readonly error: Error | undefined;
  /** The last message, if any. */
  readonly lastMessage: M | undefined;
  /** Sends a message (queued while the socket is down) or, without one, resubmits the last. */
  sendMessage: AbstractChat<M>["sendMessage"];
  /** Regenerates an assistant message. */
  regenerate: AbstractChat<M>["regenerate"];
  /** Stops the stream and cancels the server turn. */
  stop: () => Promise<void>;
  /** Resumes a running server stream (serialized). */
  resumeStream: (options?: ChatRequestOptions) => Promise<void>;
  /** Clears the error and returns to `ready`. */
  clearError: () => void;
  /** Answers a tool call and tells the server. */
  addToolOutput: (options: AddToolOutputOptions) => void;
  /** Answers a tool approval request and tells the server. */
  addToolApprovalResponse: AbstractChat<M>["addToolApprovalResponse"];
}

/** What {@link useAgentChat} returns. */
export interface UseAgentChatReturn<M extends UIMessage = UIMessage> {
  /** The chat (AI SDK surface, reactive getters). */
  chat: AgentChat<M>;
  /** The transcript, with answered tool calls shown as answered. */
  messages: Readonly<ShallowRef<M[]>>;
  /** `submitted`, `streaming`, `ready` or `error`. */
  status: Readonly<ShallowRef<ChatStatus>>;
  /** The last request's error, if any. */
  error: Readonly<ShallowRef<Error | undefined>>;
  /** The chat id. */
  id: ComputedRef<string>;
  /** Sends a message; queued while the socket is down. */
  sendMessage: AbstractChat<M>["sendMessage"];
  /** Regenerates an assistant message. */
  regenerate: AbstractChat<M>["regenerate"];
  /** Stops the stream and sends one cancel for the server turn it follows. */
  stop: () => Promise<void>;
  /** Resumes a running server stream (serialized; concurrent calls share one). */
  resumeStream: (options?: ChatRequestOptions) => Promise<void>;
  /** Clears the error and returns to `ready`. */
  clearError: () => void;
  /**
   * Replaces the transcript (resolving an updater first) and sends it to the
   * server. An agent with `orderTranscript` stores the list as it is; a stock
   * `AIChatAgent` only adds and updates, keeping the messages the list leaves out.
   */
  setMessages: (messages: M[] | ((current: M[]) => M[])) => void;
  /** Clears the transcript here and on the server. */
  clearHistory: () => void;
  /** Answers a tool call: sends `cf_agent_tool_result`, updates the part in place. */
  addToolOutput: (options: AddToolOutputOptions) => void;
  /** @deprecated Use `addToolOutput`. */
  addToolResult: (options: { tool?: string; toolCallId: string; output?: unknown }) => void;
  /** Answers a tool approval request; warns and sends nothing for an unknown id. */
  addToolApprovalResponse: AbstractChat<M>["addToolApprovalResponse"];
  /** A stream this client did not start is running, or client tool work is pending. */
  isServerStreaming: ComputedRef<boolean>;
  /**
   * The status to bind in a chat UI (`UChatMessages`, `UChatPromptSubmit`, AI Elements):
   * `status` while this tab has a request out, else `streaming` while `isServerStreaming`
   * (another tab's turn, or one the server started), else `status`.
   */
  displayStatus: ComputedRef<ChatStatus>;
  /** `status === "streaming"` or `isServerStreaming`. */
  isStreaming: ComputedRef<boolean>;
  /** The server is recovering an interrupted turn. */
  isRecovering: Readonly<ShallowRef<boolean>>;
  /** The current activity is the server continuing after a tool output or approval. */
  isToolContinuation: Readonly<ShallowRef<boolean>>;
  /** Why the connection is failing, or `null`. Cleared when a socket opens. */
  connectionError: Readonly<ShallowRef<Error | null>>;
  /** `connecting`, `open` or `closed` (closed for good). */
  connectionStatus: Readonly<ShallowRef<ConnectionStatus>>;
  /** True until the first transcript read finished. */
  isLoading: Readonly<ShallowRef<boolean>>;
  /** Messages sent while the socket was down, waiting to go out (also shown in `messages`). */
  queuedMessages: Readonly<ShallowRef<M[]>>;
  /**
   * Experimental, with the AI SDK's `experimental_queue` option: the messages
   * sent while this tab's reply streams or waits for a tool result or an
   * approval, in the order they will go out (not in `messages` until then).
   * Always empty without the option.
   */
  experimental_queuedMessages: Readonly<ShallowRef<M[]>>;
  /** Experimental (`experimental_queue`): takes the queued message `id` off the queue; it is not sent. */
  experimental_removeQueuedMessage: (id: string) => void;
  /**
   * Experimental (`experimental_queue`): sends the queued message `id` next,
   * now. A reply of this tab's in progress is stopped first, as `stop()`
   * stops it (the server turn is cancelled too); the rest of the queue
   * follows. Nothing happens for an id that is not queued.
   */
  experimental_sendQueuedMessageNow: (id: string) => Promise<void>;
  /** The transcript on screen is the cached copy (`persist`), not yet replaced by the server's. */
  isCached: Readonly<ShallowRef<boolean>>;
  /** Resolves once the first transcript is in. */
  ready: Promise<void>;
  /**
   * The socket the chat is on (its own, or the shared one), or `null` without
   * one. Pass the return value as `agent` to `useAgentToolEvents` to follow
   * the agent tools of this conversation.
   */
  client: Readonly<ShallowRef<AgentSocket | null>>;
}
