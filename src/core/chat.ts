import type { AbstractChat, ChatInit, ChatRequestOptions, ChatStatus, UIMessage } from "ai";
import { type AddressedSocket, agentNameToKebab, httpAddressOf } from "./address";
import type { Cell } from "./chat-state";
import type { AgentSocket, ConnectionStatus } from "./connection";
import { fetchTranscript, messagesUrl, readShared } from "./load";
import type { ChatPersistence } from "./persistence";
import type { ChatTurnEndEvent } from "./protocol";
import { ChatSession, warnDeprecated } from "./session";
import type {
  AddToolOutputOptions,
  BodySource,
  OnToolCallCallback,
  PrepareSendMessagesRequestOptions,
  PrepareSendMessagesRequestResult,
  SessionCells,
  SessionConfig,
  SessionSettings,
  TranscriptReader
} from "./settings";
import { toolsWithoutExecute, type AITool } from "./tools";
import { mergeStoredWins } from "./transcript";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

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

/** The options a chat is made from, beyond where it connects and a reactive `body` (see `UseAgentChatOptions`). */
export interface ChatOptions<M extends UIMessage = UIMessage> extends ForwardedChatInit<M> {
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
  /** Adds fields to each request body; only `body` of the result is used. */
  prepareSendMessagesRequest?: (
    options: PrepareSendMessagesRequestOptions<M>
  ) => PrepareSendMessagesRequestResult | Promise<PrepareSendMessagesRequestResult>;
  /** Ignored: the chat id comes from the agent's address (as upstream). */
  id?: string;
  /**
   * Keep this conversation in the browser's durable storage: the last
   * transcript shows at once on the next mount (`isCached`), and messages
   * queued while offline survive a reload or a closed tab. Make one with
   * `indexedDBPersistence()` from `agents-vue/persist`. Without it nothing
   * is stored.
   */
  persist?: ChatPersistence;
}

/** Where a chat talks: its socket (opened by the chat or the app's), and the conversation's names. */
export interface ChatTarget {
  socket: AgentSocket;
  /** The chat opened the socket and closes it when it ends. */
  owns: boolean;
  agent: string;
  name: string;
  /** `agent/name`: what warnings name (never a URL with its query). */
  label: string;
  /** The conversation's address: what `persist` keys it by. */
  key: string;
}

/** Milliseconds between message publications while a reply streams, unless `throttle` says otherwise. */
export const DEFAULT_THROTTLE_MS = 50;

/** The options a session reads whose default is a value. */
const DEFAULTS: Partial<Record<keyof SessionSettings<UIMessage>, unknown>> = {
  resume: true,
  cancelOnClientAbort: false,
  autoContinueAfterToolResult: true,
  autoSendAfterAllConfirmationsResolved: true,
  syncMessagesToServer: true,
  resyncOnReconnect: true,
  sendOnlyNewMessages: false,
  experimental_automaticToolResolution: false,
  mergeMessages: mergeStoredWins
};

/**
 * The settings a session reads, at their defaults, read from `options`
 * whenever the session asks, so callbacks and flags can change. `body`
 * reads the request body at send time (absent: none).
 */
export function chatSettings<M extends UIMessage>(options: ChatOptions<M>, body?: () => BodySource | undefined): SessionSettings<M> {
  return new Proxy({} as SessionSettings<M>, {
    get: (_, key: keyof SessionSettings<M>) =>
      key === "body"
        ? body?.()
        : key === "toolsRequiringConfirmation"
          ? (options.toolsRequiringConfirmation ?? toolsWithoutExecute(options.tools))
          : ((options as Record<string, unknown>)[key] ?? DEFAULTS[key])
  });
}

/** The cells a chat publishes into, made with `cell`: Vue's `shallowRef` in the composable, a plain `{ value }` elsewhere. */
export function chatCells<M extends UIMessage>(cell: <T>(value: T) => Cell<T>): SessionCells<M> & { cached: Cell<boolean>; sdkQueued: Cell<M[]> } {
  return {
    messages: cell<M[]>([]),
    status: cell<ChatStatus>("ready"),
    error: cell<Error | undefined>(undefined),
    serverStreaming: cell(false),
    recovering: cell(false),
    toolContinuation: cell(false),
    connectionError: cell<Error | null>(null),
    connection: cell<ConnectionStatus>("connecting"),
    loading: cell(false),
    runningToolCalls: cell<ReadonlySet<string>>(new Set()),
    queued: cell<M[]>([]),
    sdkQueued: cell<M[]>([]),
    cached: cell(false)
  };
}

function agentUnreachable(why: string): never {
  throw new Error(`the agent did not answer (${why})`);
}

/**
 * Where a chat on `target` reads its transcript: the first load and the read-backs, with the default
 * `/get-messages` reads or the app's loader. The address is read when a read starts: a shared socket may
 * name it only once it connects (issue 21, 7).
 */
export function transcriptReaders<M extends UIMessage>(options: ChatOptions<M>, target: ChatTarget) {
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
  // A read-back follows something the server did (stored a reply, cleared): it must start now, not join a read
  // begun before that. `null` reads nothing, ever (issue 21, 8). One that did not reach the agent fails, with
  // `persist` or without: it is made again, never read as empty.
  const readStored: TranscriptReader<M> | undefined =
    custom === null ? undefined : typeof custom === "function" ? fromServer : atAddress((url) => fetchTranscript<M>(url, options, label, agentUnreachable));
  const given = options.initialMessages;
  const loadOnOpen = given !== undefined || custom === null ? undefined : fromServer;
  const initialMessages = given ?? (loadOnOpen ? [] : (options.messages ?? []));
  // The default reader needs the socket's address; a custom loader is the app's to point.
  const canRead = typeof custom === "function" ? undefined : () => addressNow() !== null;
  // The agent class at its host: the instance name is the address's last segment.
  const agentKey = addressNow()?.replace(/\/[^/]*$/, "");
  return { initialMessages, loadOnOpen, readStored, canRead, agentKey };
}

/** A session's whole configuration for `target`, as `useAgentChat` gives it (see `createChatSession`). */
export function chatConfig<M extends UIMessage>(
  options: ChatOptions<M>,
  target: ChatTarget,
  cells: SessionCells<M>,
  settings: SessionSettings<M>
): SessionConfig<M> {
  return {
    ...transcriptReaders(options, target),
    socket: target.socket,
    ownsSocket: target.owns,
    chatId: `${agentNameToKebab(target.agent)}/${target.name}|${target.key}`,
    label: target.label,
    cells,
    settings: () => settings,
    chatInit: {
      generateId: options.generateId,
      messageMetadataSchema: options.messageMetadataSchema,
      dataPartSchemas: options.dataPartSchemas,
      sendAutomaticallyWhen: options.sendAutomaticallyWhen,
      experimental_queue: options.experimental_queue
    },
    throttleMs: options.throttle === false ? undefined : (options.throttle ?? options.experimental_throttle ?? DEFAULT_THROTTLE_MS),
    partyKey: () => (target.socket as AddressedSocket)._pk ?? "",
    persist: options.persist,
    persistKey: target.key
  };
}

/**
 * A chat session on `target`, configured from `options`: the one way a
 * session is made, by `useAgentChat`, the tests and the model's simulation.
 * `adjust` sees the configuration last (development tools wrap its readers).
 */
export function createChatSession<M extends UIMessage>(
  options: ChatOptions<M>,
  target: ChatTarget,
  cells: SessionCells<M>,
  settings: SessionSettings<M> = chatSettings(options),
  adjust?: (config: SessionConfig<M>) => SessionConfig<M>
): ChatSession<M> {
  const config = chatConfig(options, target, cells, settings);
  return new ChatSession<M>(adjust ? adjust(config) : config);
}

/** Development builds: one warning per deprecated option in use (upstream's names still work). */
export function warnDeprecatedOptions<M extends UIMessage>(options: ChatOptions<M>): void {
  if (process.env.NODE_ENV === "production") return;
  if (options.toolsRequiringConfirmation) {
    warnDeprecated("toolsRequiringConfirmation", "the 'toolsRequiringConfirmation' option; use needsApproval on server-side tools.");
  }
  if (options.experimental_automaticToolResolution) {
    warnDeprecated(
      "experimental_automaticToolResolution",
      "the 'experimental_automaticToolResolution' option; give tools an execute function or use onToolCall."
    );
  }
  if (options.autoSendAfterAllConfirmationsResolved !== undefined) {
    warnDeprecated("autoSendAfterAllConfirmationsResolved", "the 'autoSendAfterAllConfirmationsResolved' option; use sendAutomaticallyWhen from the AI SDK.");
  }
}

function noConnection(): never {
  throw new Error(
    process.env.NODE_ENV !== "production"
      ? "[agents-vue] The chat has no connection yet (the `agent` option is empty)."
      : "[agents-vue] The chat has no connection yet."
  );
}

/** What a chat does, on whichever session `current` names now (a conversation switch replaces it; `stop` without one does nothing). */
export function chatActions<M extends UIMessage>(current: () => ChatSession<M> | null) {
  const session = (): ChatSession<M> => current() ?? noConnection();
  const sendMessage: AbstractChat<M>["sendMessage"] = (message, options) => session().sendMessage(message, options);
  const regenerate: AbstractChat<M>["regenerate"] = (options) => session().regenerate(options);
  const addToolApprovalResponse: AbstractChat<M>["addToolApprovalResponse"] = (args) => session().tools.addToolApprovalResponse(args);
  return {
    sendMessage,
    regenerate,
    stop: () => current()?.stop() ?? Promise.resolve(),
    resumeStream: (options?: ChatRequestOptions) => session().resumeStream(options),
    clearError: () => session().clearError(),
    setMessages: (next: M[] | ((messages: M[]) => M[])) => session().setMessages(next),
    clearHistory: () => session().clearHistory(),
    addToolOutput: (options: AddToolOutputOptions) => session().tools.addToolOutput(options),
    addToolResult: (args: { tool?: string; toolCallId: string; output?: unknown }) => {
      if (process.env.NODE_ENV !== "production") warnDeprecated("addToolResult", "addToolResult(); use addToolOutput().");
      session().tools.addToolResult(args);
    },
    addToolApprovalResponse,
    /** With `experimental_queue`: takes a message off the AI SDK's queue; it is not sent. */
    experimental_removeQueuedMessage: (id: string) => current()?.chat.experimental_removeQueuedMessage(id),
    /** With `experimental_queue`: sends that queued message now, stopping a reply of this tab's as `stop()` does. */
    experimental_sendQueuedMessageNow: (id: string) => current()?.sendQueuedNow(id) ?? Promise.resolve()
  };
}
