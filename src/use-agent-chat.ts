import type { AbstractChat, ChatInit, ChatRequestOptions, ChatStatus, UIMessage } from "ai";
import { AgentClient, type AgentClientOptions } from "agents/client";
import {
  type ComputedRef,
  type MaybeRefOrGetter,
  type Ref,
  type ShallowRef,
  computed,
  isRef,
  markRaw,
  shallowReadonly,
  shallowRef,
  toValue,
  watch
} from "vue";
import { type AddressedSocket, agentNameToKebab, httpAddressOf, messagesUrl } from "./core/address";
import type { AgentSocket } from "./core/connection";
import { fetchTranscript } from "./core/load";
import type { ChatTurnEndEvent } from "./core/protocol";
import {
  type AddToolOutputOptions,
  type BodySource,
  ChatSession,
  type ConnectionStatus,
  type OnToolCallCallback,
  type PrepareSendMessagesRequestOptions,
  type PrepareSendMessagesRequestResult,
  type SessionCells,
  type SessionSettings,
  type TranscriptReader,
  warnDeprecated
} from "./core/session";
import { isDevelopment } from "./core/diagnostics";
import { type AITool, hasPendingClientToolCalls, toolsWithoutExecute } from "./core/tools";
import { mergeStoredWins } from "./core/transcript";
import { assertBrowser, onDispose, warnOutsideScope } from "./lifecycle";

/**
 * Where the composable connects when it owns the socket. Every field may be a
 * ref or a getter: changing `agent`, `name`, `host`, `basePath` or `path`
 * switches the chat to that conversation without remounting; changing only
 * `query` (a rotated token) reconnects the same conversation.
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
  /** A path appended to the agent's URL. */
  path?: MaybeRefOrGetter<string | undefined>;
  /** Query parameters of the WebSocket URL (e.g. an auth token), or a function returning them. */
  query?: MaybeRefOrGetter<Record<string, string | null | undefined> | undefined> | (() => Promise<Record<string, string | null | undefined>>);
}

/** A connection the app already holds: `useAgent`'s return, an `AgentClient`, or any compatible socket. */
export type SharedAgentConnection = AgentSocket | { client: Readonly<Ref<AgentSocket | null | undefined>> };

/** AI SDK chat options the composable forwards to the chat. */
export type ForwardedChatInit<M extends UIMessage> = Pick<
  ChatInit<M>,
  | "onError"
  | "onFinish"
  | "onData"
  | "generateId"
  | "messageMetadataSchema"
  | "dataPartSchemas"
  | "sendAutomaticallyWhen"
  | "experimental_queue"
>;

/** Options of {@link useAgentChat}. */
export interface UseAgentChatOptions<M extends UIMessage = UIMessage> extends ForwardedChatInit<M> {
  /** Connection options: the composable opens its own socket and closes it on unmount. */
  client?: AgentChatClientOptions;
  /** A connection the app owns (e.g. from `useAgent`); it is never closed by this composable. */
  agent?: MaybeRefOrGetter<SharedAgentConnection | null | undefined>;
  /** The starting transcript. When given, nothing is read from `/get-messages` on the first open. */
  initialMessages?: M[];
  /** Upstream's name for a starting transcript, used only when no transcript is read. */
  messages?: M[];
  /** A custom transcript loader, or `null` to read nothing. Default: `GET <agent>/get-messages`. */
  getInitialMessages?: null | ((options: { agent: string; name: string; url?: string }) => Promise<M[]>);
  /** `credentials` for transcript reads. */
  credentials?: RequestCredentials;
  /** Headers for transcript reads (e.g. `Authorization`). */
  headers?: HeadersInit;
  /** Re-read the stored transcript when a replacement socket opens. Default `true`. */
  resyncOnReconnect?: boolean;
  /** How a reconnect combines what is on screen with what is stored. Default: by id, stored wins. */
  mergeMessages?: (onScreen: M[], stored: M[]) => M[];
  /** Runs first on every socket frame (parsed, or the raw text); return `true` to consume it. */
  onFrame?: (frame: unknown) => boolean | void;
  /** Send only the messages the server does not hold, plus `afterMessageId`. Default `false`. */
  sendOnlyNewMessages?: boolean;
  /** Milliseconds between message publications while streaming, or `false`. Default `50`. */
  throttle?: number | false;
  /** @deprecated Use `throttle`. */
  experimental_throttle?: number;
  /** Answers client tool calls that have no `execute`, once the response stream ended. */
  onToolCall?: OnToolCallCallback;
  /** Called once per ended request, with the user message ids it carried. */
  onTurnEnd?: (event: ChatTurnEndEvent) => void;
  /** Tools the browser runs; their schemas go to the server with every request. */
  tools?: Record<string, AITool>;
  /** @deprecated Use `needsApproval` on server tools. Tools that wait for a person. */
  toolsRequiringConfirmation?: string[];
  /** @deprecated Use `tools` with `execute`, or `onToolCall`. */
  experimental_automaticToolResolution?: boolean;
  /** Let the server continue after a tool output or approval. Default `true`. */
  autoContinueAfterToolResult?: boolean;
  /** @deprecated Use `sendAutomaticallyWhen`. Only with `autoContinueAfterToolResult: false`. */
  autoSendAfterAllConfirmationsResolved?: boolean;
  /** Resume a stream that is running when the socket opens. Default `true`. */
  resume?: boolean;
  /** Cancel the server turn on local aborts (unmount, switching). `stop()` always cancels. Default `false`. */
  cancelOnClientAbort?: boolean;
  /** `setMessages` also sends the transcript to the server. Default `true`. */
  syncMessagesToServer?: boolean;
  /** Extra request body: an object, a function (read at send time) or a ref. */
  body?: MaybeRefOrGetter<Record<string, unknown> | Promise<Record<string, unknown>> | undefined>;
  /** Adds fields to each request body; only `body` of the result is used. */
  prepareSendMessagesRequest?: (
    options: PrepareSendMessagesRequestOptions<M>
  ) => PrepareSendMessagesRequestResult | Promise<PrepareSendMessagesRequestResult>;
  /** Ignored: the chat id comes from the agent's address (as upstream). */
  id?: string;
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
  /** Replaces the transcript (resolving an updater first) and sends it to the server. */
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
  /** `status === "streaming"` or `isServerStreaming`. */
  isStreaming: ComputedRef<boolean>;
  /**
   * The status to bind in a chat UI (`UChatMessages`, `UChatPromptSubmit`, AI Elements):
   * `status` while this tab has a request out, else `streaming` while `isServerStreaming`
   * (another tab's turn, or one the server started), else `status`.
   */
  displayStatus: ComputedRef<ChatStatus>;
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
  /** Resolves once the first transcript is in. */
  ready: Promise<void>;
}

interface Target {
  socket: AgentSocket;
  owns: boolean;
  agent: string;
  name: string;
  label: string;
  key: string;
}

const DEFAULT_THROTTLE_MS = 50;
const readsInFlight = new Map<string, Promise<UIMessage[]>>();

function resolveClientFields(client: AgentChatClientOptions) {
  const query = client.query;
  return {
    agent: toValue(client.agent),
    name: toValue(client.name) ?? "default",
    host: toValue(client.host) ?? (typeof location === "undefined" ? "" : location.host),
    basePath: toValue(client.basePath),
    path: toValue(client.path),
    // A function query is PartySocket's async form: pass it through, do not call it.
    query: typeof query === "function" && !isRef(query) ? query : toValue(query)
  };
}

function addressKey(fields: { agent: string; name: string; host: string; basePath?: string; path?: string }) {
  return JSON.stringify([fields.agent, fields.name, fields.host, fields.basePath ?? null, fields.path ?? null]);
}

function sharedSocketOf(value: SharedAgentConnection | null | undefined): AgentSocket | null {
  if (!value) return null;
  if ("client" in value && isRef(value.client)) return value.client.value ?? null;
  return value as AgentSocket;
}

/**
 * Chat with a Cloudflare `AIChatAgent` over its WebSocket protocol.
 *
 * Pass `client` (where to connect) and the composable owns the socket, or
 * `agent` (a connection from `useAgent` or an `AgentClient`) to share one.
 * Everything is released when the calling component unmounts (or the
 * effect scope stops). Browser only: on the server it throws at once.
 *
 * The return value is also awaitable: `await useAgentChat(...)` resolves
 * once the stored transcript is in, for `<Suspense>`.
 */
export function useAgentChat<AgentT = unknown, M extends UIMessage = UIMessage, State = unknown>(
  options: UseAgentChatOptions<M>
): UseAgentChatReturn<M> & PromiseLike<UseAgentChatReturn<M>> {
  assertBrowser("useAgentChat");
  warnOutsideScope("useAgentChat");
  void (undefined as unknown as [AgentT, State]);
  if (!options.client && options.agent === undefined) {
    throw new Error("[agents-vue] useAgentChat needs `client` (where to connect) or `agent` (a connection).");
  }
  if (isDevelopment && options.toolsRequiringConfirmation) {
    warnDeprecated(
      "toolsRequiringConfirmation",
      "the 'toolsRequiringConfirmation' option; use needsApproval on server-side tools."
    );
  }
  if (isDevelopment && options.experimental_automaticToolResolution) {
    warnDeprecated(
      "experimental_automaticToolResolution",
      "the 'experimental_automaticToolResolution' option; give tools an execute function or use onToolCall."
    );
  }
  if (isDevelopment && options.autoSendAfterAllConfirmationsResolved !== undefined) {
    warnDeprecated(
      "autoSendAfterAllConfirmationsResolved",
      "the 'autoSendAfterAllConfirmationsResolved' option; use sendAutomaticallyWhen from the AI SDK."
    );
  }

  const cells = {
    messages: shallowRef<M[]>([]),
    status: shallowRef<ChatStatus>("ready"),
    error: shallowRef<Error | undefined>(undefined),
    serverStreaming: shallowRef(false),
    recovering: shallowRef(false),
    toolContinuation: shallowRef(false),
    connectionError: shallowRef<Error | null>(null),
    connection: shallowRef<ConnectionStatus>("connecting"),
    loading: shallowRef(false),
    runningToolCalls: shallowRef<ReadonlySet<string>>(new Set()),
    queued: shallowRef<M[]>([])
  } satisfies SessionCells<M>;

  const throttleMs =
    options.throttle === false ? undefined : (options.throttle ?? options.experimental_throttle ?? DEFAULT_THROTTLE_MS);

  // One object whose getters read the options when the session asks, so
  // callbacks and flags can change; the hot path pays a property read.
  const body = (() => toValue(options.body) ?? {}) as BodySource;
  const liveSettings: SessionSettings<M> = {
    get resume() {
      return options.resume ?? true;
    },
    get cancelOnClientAbort() {
      return options.cancelOnClientAbort ?? false;
    },
    get autoContinueAfterToolResult() {
      return options.autoContinueAfterToolResult ?? true;
    },
    get autoSendAfterAllConfirmationsResolved() {
      return options.autoSendAfterAllConfirmationsResolved ?? true;
    },
    get syncMessagesToServer() {
      return options.syncMessagesToServer ?? true;
    },
    get resyncOnReconnect() {
      return options.resyncOnReconnect ?? true;
    },
    get sendOnlyNewMessages() {
      return options.sendOnlyNewMessages ?? false;
    },
    get mergeMessages() {
      return options.mergeMessages ?? mergeStoredWins;
    },
    get body() {
      return options.body === undefined ? undefined : body;
    },
    get prepareSendMessagesRequest() {
      return options.prepareSendMessagesRequest;
    },
    get tools() {
      return options.tools;
    },
    get toolsRequiringConfirmation() {
      return options.toolsRequiringConfirmation ?? toolsWithoutExecute(options.tools);
    },
    get automaticToolResolution() {
      return options.experimental_automaticToolResolution ?? false;
    },
    get onToolCall() {
      return options.onToolCall;
    },
    get onTurnEnd() {
      return options.onTurnEnd;
    },
    get onData() {
      return options.onData;
    },
    get onError() {
      return options.onError;
    },
    get onFinish() {
      return options.onFinish;
    },
    get onFrame() {
      return options.onFrame;
    }
  };
  const settings = () => liveSettings;

  const transcriptReaders = (target: Target) => {
    const address = httpAddressOf(target.socket as AddressedSocket);
    const label = target.label;
    const custom = options.getInitialMessages;
    const fromServer: TranscriptReader<M> | undefined =
      typeof custom === "function"
        ? () => custom({ agent: target.agent, name: target.name, url: address ?? undefined })
        : address
          ? () => readShared<M>(messagesUrl(address), options, label)
          : undefined;
    // A read-back follows something the server did (stored a reply, cleared):
    // it must start now, not join a read begun before that.
    const readStored: TranscriptReader<M> | undefined =
      typeof custom === "function" || !address ? fromServer : () => fetchTranscript<M>(messagesUrl(address), options, label);
    const given = options.initialMessages;
    const loadOnOpen = given !== undefined || custom === null ? undefined : fromServer;
    const seed = given ?? (loadOnOpen ? [] : (options.messages ?? []));
    return { seed, loadOnOpen, readStored };
  };

  const openTarget = (): Target | null => {
    if (options.agent !== undefined) {
      const socket = sharedSocketOf(toValue(options.agent));
      if (!socket) return null;
      const addressed = socket as AddressedSocket;
      const agent = addressed.agent ?? "agent";
      const name = addressed.name ?? "default";
      return { socket, owns: false, agent, name, label: `${agent}/${name}`, key: httpAddressOf(addressed) ?? `${agent}/${name}` };
    }
    const client = options.client as AgentChatClientOptions;
    const fields = resolveClientFields(client);
    const { agent: _a, name: _n, host: _h, basePath: _b, path: _p, query: _q, ...socketOptions } = client;
    const socket = markRaw(
      new AgentClient({
        ...socketOptions,
        agent: fields.agent,
        name: fields.name,
        host: fields.host,
        basePath: fields.basePath,
        path: fields.path,
        query: fields.query as AgentClientOptions["query"]
      })
    ) as unknown as AgentSocket;
    return {
      socket,
      owns: true,
      agent: fields.agent,
      name: fields.name,
      label: `${fields.agent}/${fields.name}`,
      key: addressKey(fields)
    };
  };

  const startSession = (target: Target): ChatSession<M> => {
    const readers = transcriptReaders(target);
    return markRaw(
      new ChatSession<M>({
        socket: target.socket,
        ownsSocket: target.owns,
        chatId: `${agentNameToKebab(target.agent)}/${target.name}|${target.key}`,
        label: target.label,
        cells,
        settings,
        chatInit: {
          generateId: options.generateId,
          messageMetadataSchema: options.messageMetadataSchema,
          dataPartSchemas: options.dataPartSchemas,
          sendAutomaticallyWhen: options.sendAutomaticallyWhen,
          experimental_queue: options.experimental_queue
        },
        throttleMs,
        initialMessages: readers.seed,
        loadOnOpen: readers.loadOnOpen,
        readStored: readers.readStored,
        partyKey: () => (target.socket as AddressedSocket)._pk ?? ""
      })
    );
  };

  let target = openTarget();
  const session = shallowRef<ChatSession<M> | null>(target ? startSession(target) : null);
  const current = (): ChatSession<M> => session.value ?? noConnection();

  const switchTo = (next: Target | null) => {
    session.value?.dispose();
    target = next;
    cells.messages.value = [];
    cells.status.value = "ready";
    cells.error.value = undefined;
    session.value = next ? startSession(next) : null;
  };

  // Switching conversations without remounting.
  if (options.agent !== undefined) {
    watch(
      () => sharedSocketOf(toValue(options.agent)),
      (socket, previous) => {
        if (socket !== previous) switchTo(openTarget());
      }
    );
  } else {
    const client = options.client as AgentChatClientOptions;
    watch(
      () => addressKey(resolveClientFields(client)),
      (key, previous) => {
        if (key !== previous) switchTo(openTarget());
      }
    );
    watch(
      () => {
        const query = client.query;
        return typeof query === "function" && !isRef(query) ? query : toValue(query);
      },
      (query) => {
        // A rotated token reconnects the same conversation; the UI state stays.
        const socket = target?.socket as unknown as AgentClient | undefined;
        if (!socket || !target?.owns) return;
        socket.updateProperties({ query: query as AgentClientOptions["query"] });
        socket.reconnect();
      },
      { deep: true }
    );
  }

  onDispose(() => {
    session.value?.dispose();
    session.value = null;
  });

  const tools = () => options.tools;
  const requiringConfirmation = () => options.toolsRequiringConfirmation ?? toolsWithoutExecute(options.tools);
  const isServerStreaming = computed(
    () =>
      cells.serverStreaming.value ||
      hasPendingClientToolCalls(cells.messages.value, cells.runningToolCalls.value, tools(), requiringConfirmation())
  );
  const isStreaming = computed(() => cells.status.value === "streaming" || isServerStreaming.value);
  // This tab's own request wins; a submitted one must not read as streaming.
  const displayStatus = computed<ChatStatus>(() =>
    isServerStreaming.value && cells.status.value !== "submitted" ? "streaming" : cells.status.value
  );
  const id = computed(() => session.value?.chat.id ?? "");

  const sendMessage: AbstractChat<M>["sendMessage"] = (message, requestOptions) =>
    current().sendMessage(message, requestOptions);
  const regenerate: AbstractChat<M>["regenerate"] = (regenerateOptions) => current().regenerate(regenerateOptions);
  const stop = () => session.value?.stop() ?? Promise.resolve();
  const resumeStream = (resumeOptions?: ChatRequestOptions) => current().resumeStream(resumeOptions);
  const clearError = () => current().chat.clearError();
  const setMessages = (next: M[] | ((currentMessages: M[]) => M[])) => current().setMessages(next);
  const clearHistory = () => current().clearHistory();
  const addToolOutput = (toolOptions: AddToolOutputOptions) => current().tools.addToolOutput(toolOptions);
  const addToolResult = (args: { tool?: string; toolCallId: string; output?: unknown }) => {
    if (isDevelopment) warnDeprecated("addToolResult", "addToolResult(); use addToolOutput().");
    current().tools.addToolResult(args);
  };
  const addToolApprovalResponse: AbstractChat<M>["addToolApprovalResponse"] = (args) =>
    current().tools.addToolApprovalResponse(args);

  const chat: AgentChat<M> = markRaw({
    get id() {
      return id.value;
    },
    get messages() {
      return cells.messages.value;
    },
    set messages(next: M[]) {
      setMessages(next);
    },
    get status() {
      return cells.status.value;
    },
    get error() {
      return cells.error.value;
    },
    get lastMessage() {
      const messages = cells.messages.value;
      return messages[messages.length - 1];
    },
    sendMessage,
    regenerate,
    stop,
    resumeStream,
    clearError,
    addToolOutput,
    addToolApprovalResponse
  });

  const shell: UseAgentChatReturn<M> = {
    chat,
    messages: shallowReadonly(cells.messages),
    status: shallowReadonly(cells.status),
    error: shallowReadonly(cells.error),
    id,
    sendMessage,
    regenerate,
    stop,
    resumeStream,
    clearError,
    setMessages,
    clearHistory,
    addToolOutput,
    addToolResult,
    addToolApprovalResponse,
    isServerStreaming,
    isStreaming,
    displayStatus,
    isRecovering: shallowReadonly(cells.recovering),
    isToolContinuation: shallowReadonly(cells.toolContinuation),
    connectionError: shallowReadonly(cells.connectionError),
    connectionStatus: shallowReadonly(cells.connection),
    isLoading: shallowReadonly(cells.loading),
    queuedMessages: shallowReadonly(cells.queued),
    get ready() {
      return session.value?.ready ?? Promise.resolve();
    }
  };

  return {
    ...shell,
    get ready() {
      return shell.ready;
    },
    // oxlint-disable-next-line unicorn/no-thenable -- awaitable on purpose, for <Suspense>
    then(onFulfilled, onRejected) {
      // Resolve with the shell (no `then`), or awaiting would recurse forever.
      return shell.ready.then(() => shell).then(onFulfilled, onRejected);
    }
  };
}

function noConnection(): never {
  throw new Error("[agents-vue] The chat has no connection yet (the `agent` option is empty).");
}

/** Concurrent reads of one address share a request (upstream dedupes initial loads). */
function readShared<M extends UIMessage>(
  url: string,
  init: { credentials?: RequestCredentials; headers?: HeadersInit },
  label: string
): Promise<M[]> {
  const key = `${url}|${init.credentials ?? ""}|${JSON.stringify(headersKey(init.headers))}`;
  let read = readsInFlight.get(key);
  if (!read) {
    read = fetchTranscript<UIMessage>(url, init, label).finally(() => readsInFlight.delete(key));
    readsInFlight.set(key, read);
  }
  return read as Promise<M[]>;
}

function headersKey(headers: HeadersInit | undefined): Array<[string, string]> {
  if (!headers) return [];
  return [...new Headers(headers).entries()];
}
