import type { ChatStatus, UIMessage } from "ai";
import type { AgentClient, AgentClientOptions } from "agents/client";
import { type ShallowRef, computed, markRaw, shallowReadonly, shallowRef, toValue, watch } from "vue";
import { type AddressedSocket, httpAddressOf } from "./core/address";
import { chatActions, chatCells, chatSettings, createChatSession, warnDeprecatedOptions } from "./core/chat";
import type { Cell } from "./core/chat-state";
import type { AgentSocket } from "./core/connection";
import type { BodySource, ChatSession } from "./core/session";
import { devtoolsProbe } from "./core/devtools-probe";
import { hasPendingClientToolCalls } from "./core/tools";
import { assertBrowser, onDispose, warnOutsideScope } from "./lifecycle";
import { type Target, addressKey, clientQuery, resolveClientFields, targetOf } from "./chat-target";
import { sharedSocketOf } from "./shared-connection";
import type { AgentChat, AgentChatClientOptions, UseAgentChatOptions, UseAgentChatReturn } from "./use-agent-chat-types";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

export type * from "./use-agent-chat-types";

/** The cells a session publishes into, as `shallowRef` made them. */
type ShallowRefs<C> = { [K in keyof C]-?: C[K] extends Cell<infer T> | undefined ? ShallowRef<T> : never };


/**
 * Vue Devtools support (src/devtools/) is for development builds only. As
 * every development-only site (core/diagnostics.ts), the places that bring it
 * in test `process.env.NODE_ENV` themselves: a bundler that does not inline
 * constants across modules (esbuild) folds only a test written where it is
 * used, and only then drops the probe and the inspector's `import()` from a
 * production bundle (test/unit/devtools.test.ts).
 */

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
  warnDeprecatedOptions(options);

  const cells = chatCells<M>(shallowRef) as ShallowRefs<ReturnType<typeof chatCells<M>>>;

  // Vue Devtools, in development builds with Devtools on the page: the chat's frames, reads and state (src/devtools/).
  const probe = process.env.NODE_ENV !== "production" ? devtoolsProbe() : null;

  // The body is read at send time: an object, a getter or a ref.
  const body = (() => toValue(options.body) ?? {}) as BodySource;
  const settings = chatSettings(options, () => (options.body === undefined ? undefined : body));

  const startSession = (target: Target): ChatSession<M> =>
    markRaw(
      createChatSession(options, target, cells, settings, (config) => {
        if (process.env.NODE_ENV !== "production" && probe) {
          config.loadOnOpen = probe.reader(config.loadOnOpen, true);
          config.readStored = probe.reader(config.readStored, false);
        }
        return config;
      })
    );

  let target: Target | null = null;
  const session = shallowRef<ChatSession<M> | null>(null);
  const socket = shallowRef<AgentSocket | null>(null);

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
        settings.tools,
        settings.toolsRequiringConfirmation
      )
  );
  const isStreaming = computed(() => cells.status.value === "streaming" || isServerStreaming.value);
  // This tab's own request wins; a submitted one must not read as streaming.
  const displayStatus = computed<ChatStatus>(() =>
    isServerStreaming.value && cells.status.value !== "submitted" ? "streaming" : cells.status.value
  );
  const id = computed(() => session.value?.chat.id ?? "");
  const ready = () => session.value?.ready ?? Promise.resolve();

  const actions = chatActions(() => session.value);
  const { sendMessage, regenerate, stop, resumeStream, clearError, setMessages, addToolOutput, addToolApprovalResponse } = actions;

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
    ...actions,
    chat,
    messages: shallowReadonly(cells.messages),
    status: shallowReadonly(cells.status),
    error: shallowReadonly(cells.error),
    id,
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
