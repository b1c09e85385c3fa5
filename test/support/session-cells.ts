import type { ChatStatus, UIMessage } from "ai";
import type { Cell } from "../../src/core/chat-state";
import type { SessionCells } from "../../src/core/session";

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
