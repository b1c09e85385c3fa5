/**
 * The wire names of exact sync (an ordered, versioned transcript), shared by
 * the server half (`orderTranscript`) and the client. This module imports
 * nothing, so a client bundle can take the strings without the server code.
 */

/** Frame type of a client's snapshot request: `{ type, id }`. */
export const SNAPSHOT_REQUEST = "agents_vue_snapshot_request";

/** Frame type of a full transcript (upstream's own; exact sync adds fields to it). */
export const CHAT_MESSAGES = "cf_agent_chat_messages";

/** Frame type of a one-message update (upstream's own; exact sync adds `version`). */
export const MESSAGE_UPDATED = "cf_agent_message_updated";

/** Frame type of a cleared transcript (upstream's own; exact sync adds `version`). */
export const CHAT_CLEAR = "cf_agent_chat_clear";

/**
 * Field of every transcript frame from an ordered agent: the transcript
 * version the frame brings the socket to (a non-negative integer, one more
 * than the socket's previous one, except on `connect` and `snapshot` frames).
 */
export const VERSION_FIELD = "version";

/** Field of the connect-time transcript frame (`true`); upstream's own flag. */
export const CONNECT_FIELD = "connect";

/** Field of a snapshot answer: the `id` of the request it answers. */
export const SNAPSHOT_FIELD = "snapshot";

/** Field of a snapshot request naming it; the answer echoes it in {@link SNAPSHOT_FIELD}. */
export const SNAPSHOT_ID_FIELD = "id";

/** A client's snapshot request, as sent on the socket. */
export interface SnapshotRequestFrame {
  type: typeof SNAPSHOT_REQUEST;
  id: string;
}

/**
 * A full transcript from an ordered agent, carrying `M` messages: a
 * broadcast (no `connect`, no `snapshot`), the connect-time frame
 * (`connect: true`) or the answer to a snapshot request (`snapshot: id`).
 */
export interface VersionedMessagesFrame<M = unknown> {
  type: typeof CHAT_MESSAGES;
  messages: M[];
  version: number;
  connect?: true;
  snapshot?: string;
}

/** A one-message update from an ordered agent. */
export interface VersionedMessageUpdatedFrame<M = unknown> {
  type: typeof MESSAGE_UPDATED;
  message: M;
  version: number;
}

/** A cleared transcript from an ordered agent. */
export interface VersionedClearFrame {
  type: typeof CHAT_CLEAR;
  version: number;
}
