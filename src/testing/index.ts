/**
 * `agents-vue/testing`: an in-memory `AIChatAgent` for your own component
 * tests (Vitest in Node, jsdom or browser mode). Pass `createTestAgent().socket`
 * as `agent` to `useAgentChat`; script its replies, tool calls, approvals,
 * errors, dropped sockets and a second tab. The simulated server is the one
 * the project's property test proves the chat against.
 */
export { createTestAgent, type OtherTab, type ReceivedFrame, type TestAgent, type TestAgentOptions, type TestTurn } from "./test-agent";
export type { Reply, ReplyStep } from "./replies";
