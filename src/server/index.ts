/**
 * The server halves of agents-vue, for an `AIChatAgent` running in workerd:
 * `sendOnlyNewMessages` (`acceptPartialRequests`) and exact sync
 * (`orderTranscript`). No Vue and no DOM: import it from `agents-vue/server`
 * in a worker.
 */
export { rebuild } from "./rebuild";
export {
  acceptPartialRequests,
  rebuildRequestFrame,
  withPartialRequests,
  type PartialRequestHost
} from "./partial-requests";
export {
  orderTranscript,
  withOrderedTranscript,
  type OrderedConnection,
  type OrderedTranscriptHost
} from "./ordered-transcript";
export {
  CHAT_CLEAR,
  CHAT_MESSAGES,
  CONNECT_FIELD,
  MESSAGE_UPDATED,
  SNAPSHOT_FIELD,
  SNAPSHOT_ID_FIELD,
  SNAPSHOT_REQUEST,
  VERSION_FIELD,
  type SnapshotRequestFrame,
  type VersionedClearFrame,
  type VersionedMessageUpdatedFrame,
  type VersionedMessagesFrame
} from "./ordered-wire";
