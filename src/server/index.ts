/**
 * The server half of `sendOnlyNewMessages`, for an `AIChatAgent` running in
 * workerd. No Vue and no DOM: import it from `agents-vue/server` in a worker.
 */
export { rebuild } from "./rebuild";
export {
  acceptPartialRequests,
  rebuildRequestFrame,
  withPartialRequests,
  type PartialRequestHost
} from "./partial-requests";
