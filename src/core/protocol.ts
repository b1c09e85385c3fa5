import * as CHAT_MESSAGE_TYPES from "./frame-types";
import { SNAPSHOT_REQUEST } from "../server/ordered-wire";

// The frame types are our own copy of agents/chat's (see ./frame-types): importing them from there would cost an esbuild-built app upstream's message builder.
/** The frame types the session shell sends or reads by name; the rules use `CHAT_MESSAGE_TYPES` (./frame-types). */
export const Wire = {
  chatResponse: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE,
  streamResumeAck: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK,
  streamResumeRequest: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST,
  /** agents-vue's ordered server half (`agents-vue/server`): asks for the transcript with its version. */
  snapshotRequest: SNAPSHOT_REQUEST
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
