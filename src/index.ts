export {
  useAgentChat,
  type AgentChat,
  type AgentChatClientOptions,
  type ForwardedChatInit,
  type SharedAgentConnection,
  type UseAgentChatOptions,
  type UseAgentChatReturn
} from "./use-agent-chat";
export { agentChatKey, injectAgentChat, provideAgentChat } from "./chat-context";
export type {
  AddToolOutputOptions,
  BodySource,
  ConnectionStatus,
  OnToolCallCallback,
  PrepareSendMessagesRequestOptions,
  PrepareSendMessagesRequestResult
} from "./core/session";
export type { AgentSocket } from "./core/connection";
export type { ChatTurnEndEvent, ChatTurnOutcome } from "./core/protocol";
export {
  extractClientToolSchemas,
  getToolApproval,
  getToolCallId,
  getToolInput,
  getToolOutput,
  getToolPartState,
  type AITool,
  type ClientToolSchema,
  type ToolPartState
} from "./core/tools";
export { mergeStoredWins } from "./core/transcript";
export { getAgentMessages, type GetAgentMessagesOptions } from "./core/load";
export {
  useAgent,
  type AgentIdentity,
  type AgentQuery,
  type AgentQueryFunction,
  type AgentQueryParams,
  type AgentStateSource,
  type UseAgentOptions,
  type UseAgentReturn
} from "./use-agent";
