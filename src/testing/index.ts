/**
 * `agents-vue/testing`: an in-memory `AIChatAgent` for your own component
 * tests (Vitest in Node, jsdom or browser mode). Pass `createTestAgent().socket`
 * as `agent` to `useAgentChat`, or `createTestAgent().WebSocket` as
 * `WebSocket` to `useAgent`; script its replies, tool calls, approvals,
 * errors, dropped sockets and a second tab, its state and its `@callable`
 * methods. The simulated server is the one the project's property test
 * proves the chat against.
 */
export { createTestAgent, type ReceivedFrame, type TestAgent, type TestAgentOptions, type TestTurn } from "./test-agent";
export type { OtherTab } from "./other-tab";
export type { TestAgentProtocolOptions, TestAgentServer, TestHandler, TestStream } from "./agent-protocol";
export type { Reply, ReplyStep } from "./replies";
