/**
 * The server half of `sendOnlyNewMessages`, for `AIChatAgent` running in
 * workerd. No Vue, no DOM.
 */
export { rebuild } from "./rebuild";
