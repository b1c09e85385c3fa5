/**
 * The wire names of exact sync (frame types, field names and frame shapes),
 * for client code that speaks the protocol itself: `agents-vue/wire`.
 * Importing it costs nothing: the module imports nothing at run time, so a
 * bundle takes only the strings it uses. The same names are exported from
 * `agents-vue/server` for worker code.
 */
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
} from "../server/ordered-wire";
