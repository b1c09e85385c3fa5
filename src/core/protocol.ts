/**
 * The `cf_agent_*` wire vocabulary spoken between a chat client and an
 * `AIChatAgent`. The strings are the protocol; keeping our own copy means the
 * browser bundle never imports the server half of `agents`.
 */
export const Wire = {
  chatMessages: "cf_agent_chat_messages",
  chatRequest: "cf_agent_use_chat_request",
  chatResponse: "cf_agent_use_chat_response",
  chatClear: "cf_agent_chat_clear",
  requestCancel: "cf_agent_chat_request_cancel",
  streamResuming: "cf_agent_stream_resuming",
  streamResumeAck: "cf_agent_stream_resume_ack",
  streamResumeRequest: "cf_agent_stream_resume_request",
  streamResumeNone: "cf_agent_stream_resume_none",
  streamPending: "cf_agent_stream_pending",
  toolResult: "cf_agent_tool_result",
  toolApproval: "cf_agent_tool_approval",
  messageUpdated: "cf_agent_message_updated",
  chatRecovering: "cf_agent_chat_recovering",
  /** agents-vue's ordered server half (`agents-vue/server`): a snapshot of the transcript with its version. */
  snapshotRequest: "agents_vue_snapshot_request"
} as const;

/**
 * How a chat request ended on the server.
 *
 * - `completed`: the turn finished normally.
 * - `error`: the turn failed.
 * - `aborted`: the turn was cancelled while it ran.
 * - `skipped`: the turn never ran (superseded or dropped by the server's
 *   concurrency policy).
 * - `recovering`: this request stopped, and recovery continues the same turn
 *   under a new request carrying the same `messageIds`.
 */
export type ChatTurnOutcome =
  | "completed"
  | "error"
  | "aborted"
  | "skipped"
  | "recovering";

/** A chat request that ended, as reported to `onTurnEnd`. */
export interface ChatTurnEndEvent {
  /** The transport id of the request. */
  requestId: string;
  /** Ids of the user messages the request ended with, when the server knows them. */
  messageIds?: string[];
  /** How the request ended. `recovering` never reaches `onTurnEnd`. */
  outcome: Exclude<ChatTurnOutcome, "recovering">;
  /** The error text, when `outcome` is `"error"`. */
  error?: string;
  /** Whether the outcome was replayed on reconnect rather than seen live. */
  replay: boolean;
}
