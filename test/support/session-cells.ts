import type { ChatStatus, UIMessage } from "ai";
import type { Cell } from "../../src/core/chat-state";
import { ChatSession, type SessionCells, type SessionConfig, type SessionSettings } from "../../src/core/session";
import { FakeSocket } from "./fake-socket";
import { defaultSettings } from "./model-harness";

const cell = <T>(value: T): Cell<T> => ({ value });

/** Plain `{ value }` cells for a `ChatSession` in Node, as `useAgentChat` hands it shallow refs. */
export function sessionCells(): SessionCells<UIMessage> & { cached: Cell<boolean> } {
  return {
    messages: cell<UIMessage[]>([]),
    status: cell<ChatStatus>("ready"),
    error: cell<Error | undefined>(undefined),
    serverStreaming: cell(false),
    recovering: cell(false),
    toolContinuation: cell(false),
    connectionError: cell<Error | null>(null),
    connection: cell<"connecting" | "open" | "closed">("connecting"),
    loading: cell(true),
    runningToolCalls: cell<ReadonlySet<string>>(new Set()),
    queued: cell<UIMessage[]>([]),
    cached: cell(false)
  };
}

/**
 * The shipped session in Node over a scripted socket, as `useAgentChat` builds it (no socket of its own),
 * with a transcript reader that answers `stored()`. `config` adds to or replaces the configuration.
 */
export function nodeSession(
  stored: () => UIMessage[],
  settings: Partial<SessionSettings<UIMessage>> = {},
  config: Partial<SessionConfig<UIMessage>> = {}
) {
  const socket = new FakeSocket();
  const out = sessionCells();
  const session = new ChatSession<UIMessage>({
    socket,
    ownsSocket: false,
    chatId: "fake-agent/room",
    label: "fake-agent/room",
    cells: out,
    settings: () => defaultSettings(settings),
    chatInit: {},
    throttleMs: 0,
    initialMessages: [],
    loadOnOpen: async () => stored(),
    readStored: async () => stored(),
    partyKey: () => socket._pk,
    ...config
  });
  return { socket, out, session };
}
