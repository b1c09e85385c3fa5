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
export { detectToolsRequiringConfirmation, type JSONSchemaType } from "./chat-helpers";
// The framework-neutral transport the chat runs on, and its connection type, as upstream's entry exports them.
export { WebSocketChatTransport, type AgentConnection, type WebSocketChatTransportOptions } from "agents/chat/transport";
export { mergeStoredWins } from "./core/transcript";
export { getAgentMessages, type GetAgentMessagesOptions } from "./core/load";
export type { ChatPersistence, ConversationStore, PersistedChat } from "./core/persistence";
export type { SubAgentStep } from "./core/address";
export {
  useAgentToolEvents,
  type UseAgentToolEventsOptions,
  type UseAgentToolEventsReturn
} from "./use-agent-tool-events";
export type {
  AgentToolEvent,
  AgentToolEventMessage,
  AgentToolEventState,
  AgentToolRunPart,
  AgentToolRunState
} from "agents/agent-tools";
export type { AgentTransport } from "agents/client";
export type { MCPServer, MCPServersState } from "agents";
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
