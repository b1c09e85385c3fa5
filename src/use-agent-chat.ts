import type { AbstractChat, ChatRequestOptions, ChatStatus, UIMessage } from "ai";
import type { AgentClient, AgentClientOptions } from "agents/client";
import { computed, markRaw, shallowReadonly, shallowRef, toValue, watch } from "vue";
import { type AddressedSocket, agentNameToKebab, httpAddressOf, messagesUrl } from "./core/address";
import type { AgentSocket } from "./core/connection";
import { fetchTranscript, readShared } from "./core/load";
import {
  type AddToolOutputOptions,
  type BodySource,
  ChatSession,
  type ConnectionStatus,
  type SessionCells,
  type SessionSettings,
  type TranscriptReader,
  warnDeprecated
} from "./core/session";
import { devtoolsProbe } from "./core/devtools-probe";
import { hasPendingClientToolCalls, toolsWithoutExecute } from "./core/tools";
import { mergeStoredWins } from "./core/transcript";
import { assertBrowser, onDispose, warnOutsideScope } from "./lifecycle";
import { type Target, addressKey, clientQuery, resolveClientFields, targetOf } from "./chat-target";
import { sharedSocketOf } from "./shared-connection";
import type { AgentChat, AgentChatClientOptions, UseAgentChatOptions, UseAgentChatReturn } from "./use-agent-chat-types";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

export type * from "./use-agent-chat-types";


/**
 * Vue Devtools support (src/devtools/) is for development builds only. As
 * every development-only site (core/diagnostics.ts), the places that bring it
 * in test `process.env.NODE_ENV` themselves: a bundler that does not inline
 * constants across modules (esbuild) folds only a test written where it is
 * used, and only then drops the probe and the inspector's `import()` from a
 * production bundle (test/unit/devtools.test.ts).
 */

const DEFAULT_THROTTLE_MS = 50;



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
  // Only a chat that opens its own socket needs a browser; one on a connection it is handed (`agent`) opens nothing (tests in Node).
  if (options.agent === undefined) assertBrowser("useAgentChat");
  warnOutsideScope("useAgentChat");
  void (undefined as unknown as [AgentT, State]);
  if (!options.client && options.agent === undefined) {
    throw new Error(
      process.env.NODE_ENV !== "production"
        ? "[agents-vue] useAgentChat needs `client` (where to connect) or `agent` (a connection)."
        : "[agents-vue] useAgentChat needs `client` or `agent`."
    );
  }
  if (process.env.NODE_ENV !== "production" && options.toolsRequiringConfirmation) {
    warnDeprecated(
      "toolsRequiringConfirmation",
      "the 'toolsRequiringConfirmation' option; use needsApproval on server-side tools."
    );
  }
  if (process.env.NODE_ENV !== "production" && options.experimental_automaticToolResolution) {
    warnDeprecated(
      "experimental_automaticToolResolution",
      "the 'experimental_automaticToolResolution' option; give tools an execute function or use onToolCall."
    );
  }
  if (process.env.NODE_ENV !== "production" && options.autoSendAfterAllConfirmationsResolved !== undefined) {
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
    queued: shallowRef<M[]>([]),
    sdkQueued: shallowRef<M[]>([]),
    cached: shallowRef(false)
  } satisfies SessionCells<M>;

  // Vue Devtools, in development builds with Devtools on the page: the chat's frames, reads and state (src/devtools/).
  const probe = process.env.NODE_ENV !== "production" ? devtoolsProbe() : null;

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
    // The address is read when a read starts: a shared socket may name it only once it connects (issue 21, 7).
    const addressNow = () => httpAddressOf(target.socket as AddressedSocket);
    const label = target.label;
    const custom = options.getInitialMessages;
    // With `persist`, a read that did not reach the agent fails instead of reading as empty: the cached copy stays.
    const unreachable = options.persist ? agentUnreachable : undefined;
    const atAddress =
      (read: (url: string) => Promise<M[]>): TranscriptReader<M> =>
      () => {
        const address = addressNow();
        return address ? read(messagesUrl(address)) : Promise.resolve([]);
      };
    const fromServer: TranscriptReader<M> =
      typeof custom === "function"
        ? () => custom({ agent: target.agent, name: target.name, url: addressNow() ?? undefined })
        : atAddress((url) => readShared<M>(url, options, label, unreachable));
    // A read-back follows something the server did (stored a reply, cleared):
    // it must start now, not join a read begun before that. `null` reads nothing, ever (issue 21, 8).
    // One that did not reach the agent fails, with `persist` or without: it is made again, never read as empty.
    const readStored: TranscriptReader<M> | undefined =
      custom === null
        ? undefined
        : typeof custom === "function"
          ? fromServer
          : atAddress((url) => fetchTranscript<M>(url, options, label, agentUnreachable));
    const given = options.initialMessages;
    const loadOnOpen = given !== undefined || custom === null ? undefined : fromServer;
    const initialMessages = given ?? (loadOnOpen ? [] : (options.messages ?? []));
    // The default reader needs the socket's address; a custom loader is the app's to point.
    const canRead = typeof custom === "function" ? undefined : () => addressNow() !== null;
    // The agent class at its host: the instance name is the address's last segment.
    const agentKey = addressNow()?.replace(/\/[^/]*$/, "");
    // Named as the session's config names them.
    return { initialMessages, loadOnOpen, readStored, canRead, agentKey };
  };

  const startSession = (target: Target): ChatSession<M> => {
    const readers = transcriptReaders(target);
    if (process.env.NODE_ENV !== "production" && probe) {
      readers.loadOnOpen = probe.reader(readers.loadOnOpen, true);
      readers.readStored = probe.reader(readers.readStored, false);
    }
    return markRaw(
      new ChatSession<M>({
        ...readers,
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
        partyKey: () => (target.socket as AddressedSocket)._pk ?? "",
        persist: options.persist,
        persistKey: target.key
      })
    );
  };

  let target: Target | null = null;
  const session = shallowRef<ChatSession<M> | null>(null);
  const socket = shallowRef<AgentSocket | null>(null);
  const current = (): ChatSession<M> => session.value ?? noConnection();

  /** Starts the chat on `next` (the first target too: the cells are still as created then). */
  const switchTo = (next: Target | null) => {
    session.value?.dispose();
    target = next;
    cells.messages.value = [];
    cells.status.value = "ready";
    cells.error.value = undefined;
    if (process.env.NODE_ENV !== "production" && probe) probe.follow(next?.socket ?? null);
    session.value = next ? startSession(next) : null;
    socket.value = next?.socket ?? null;
  };
  /** Starts the chat on the target the options name now. */
  const switchToOptions = () => switchTo(targetOf(options));
  switchToOptions();

  // Switching conversations without remounting (a watch calls back only when its value changed).
  if (options.agent !== undefined) {
    watch(() => sharedSocketOf(toValue(options.agent)), switchToOptions);
  } else {
    const client = options.client as AgentChatClientOptions;
    watch(() => addressKey(resolveClientFields(client)), switchToOptions);
    watch(
      () => clientQuery(client),
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
    socket.value = null;
  });

  if (process.env.NODE_ENV !== "production" && probe) {
    probe.inspect(({ inspectChat }) =>
      inspectChat(probe, {
        label: () => target?.label ?? "",
        address: () => (target ? httpAddressOf(target.socket as AddressedSocket) : null),
        chatId: () => session.value?.chat.id ?? "",
        cells
      })
    );
  }

  const isServerStreaming = computed(
    () =>
      cells.serverStreaming.value ||
      hasPendingClientToolCalls(
        cells.messages.value,
        cells.runningToolCalls.value,
        liveSettings.tools,
        liveSettings.toolsRequiringConfirmation
      )
  );
  const isStreaming = computed(() => cells.status.value === "streaming" || isServerStreaming.value);
  // This tab's own request wins; a submitted one must not read as streaming.
  const displayStatus = computed<ChatStatus>(() =>
    isServerStreaming.value && cells.status.value !== "submitted" ? "streaming" : cells.status.value
  );
  const id = computed(() => session.value?.chat.id ?? "");
  const ready = () => session.value?.ready ?? Promise.resolve();

  const sendMessage: AbstractChat<M>["sendMessage"] = (message, requestOptions) =>
    current().sendMessage(message, requestOptions);
  const regenerate: AbstractChat<M>["regenerate"] = (regenerateOptions) => current().regenerate(regenerateOptions);
  const stop = () => session.value?.stop() ?? Promise.resolve();
  const resumeStream = (resumeOptions?: ChatRequestOptions) => current().resumeStream(resumeOptions);
  const clearError = () => current().clearError();
  const setMessages = (next: M[] | ((currentMessages: M[]) => M[])) => current().setMessages(next);
  const clearHistory = () => current().clearHistory();
  const addToolOutput = (toolOptions: AddToolOutputOptions) => current().tools.addToolOutput(toolOptions);
  const addToolResult = (args: { tool?: string; toolCallId: string; output?: unknown }) => {
    if (process.env.NODE_ENV !== "production") warnDeprecated("addToolResult", "addToolResult(); use addToolOutput().");
    current().tools.addToolResult(args);
  };
  const addToolApprovalResponse: AbstractChat<M>["addToolApprovalResponse"] = (args) =>
    current().tools.addToolApprovalResponse(args);
  const removeQueued = (id: string) => session.value?.chat.experimental_removeQueuedMessage(id);
  const sendQueuedNow = (id: string) => session.value?.sendQueuedNow(id) ?? Promise.resolve();

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
      return cells.messages.value.at(-1);
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
    experimental_queuedMessages: shallowReadonly(cells.sdkQueued),
    experimental_removeQueuedMessage: removeQueued,
    experimental_sendQueuedMessageNow: sendQueuedNow,
    isCached: shallowReadonly(cells.cached),
    client: shallowReadonly(socket),
    get ready() {
      return ready();
    }
  };

  return {
    ...shell,
    get ready() {
      return ready();
    },
    // oxlint-disable-next-line unicorn/no-thenable -- awaitable on purpose, for <Suspense>
    then(onFulfilled, onRejected) {
      // Resolve with the shell (no `then`), or awaiting would recurse forever.
      return ready().then(() => shell).then(onFulfilled, onRejected);
    }
  };
}

function agentUnreachable(why: string): never {
  throw new Error(`the agent did not answer (${why})`);
}

function noConnection(): never {
  throw new Error(
    process.env.NODE_ENV !== "production"
      ? "[agents-vue] The chat has no connection yet (the `agent` option is empty)."
      : "[agents-vue] The chat has no connection yet."
  );
}


