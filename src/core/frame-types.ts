/**
 * The `cf_agent_*` frame types of upstream's chat protocol, under the names
 * `agents/chat` gives them in `CHAT_MESSAGE_TYPES`. Modules import this one
 * as a namespace (`import * as CHAT_MESSAGE_TYPES from "./frame-types"`), so
 * every use reads as upstream's and a bundler inlines the strings.
 *
 * They are ours, not imported, because importing `CHAT_MESSAGE_TYPES` from
 * `agents/chat` costs an app more than the strings: esbuild keeps the
 * modules that entry imports (its message builder among them), about 1.9 KB
 * min+gzip an esbuild-built app would pay for nothing. This module imports
 * nothing. `test/unit/frame-types.test.ts` checks each value against
 * upstream's, so a renamed frame fails the suite rather than the wire.
 */

/** A full transcript (server → client, and a client's `setMessages`). */
export const CHAT_MESSAGES = "cf_agent_chat_messages";
/** A chat request (client → server). */
export const USE_CHAT_REQUEST = "cf_agent_use_chat_request";
/** One piece of a reply's stream, or its end (server → client). */
export const USE_CHAT_RESPONSE = "cf_agent_use_chat_response";
/** The transcript was cleared. */
export const CHAT_CLEAR = "cf_agent_chat_clear";
/** Stop a running request (client → server). */
export const CHAT_REQUEST_CANCEL = "cf_agent_chat_request_cancel";
/** The server offers a running stream to resume. */
export const STREAM_RESUMING = "cf_agent_stream_resuming";
/** The client takes a resume offer. */
export const STREAM_RESUME_ACK = "cf_agent_stream_resume_ack";
/** The client asks whether a stream runs. */
export const STREAM_RESUME_REQUEST = "cf_agent_stream_resume_request";
/** The server answers that no stream runs. */
export const STREAM_RESUME_NONE = "cf_agent_stream_resume_none";
/** The server took a turn that has not started streaming. */
export const STREAM_PENDING = "cf_agent_stream_pending";
/** A client tool's output (client → server). */
export const TOOL_RESULT = "cf_agent_tool_result";
/** A person's answer to a tool approval (client → server). */
export const TOOL_APPROVAL = "cf_agent_tool_approval";
/** One message replaced (server → client). */
export const MESSAGE_UPDATED = "cf_agent_message_updated";
/** The server recovers an interrupted turn, or is done with it. */
export const CHAT_RECOVERING = "cf_agent_chat_recovering";
