export { useVoiceAgent, type UseVoiceAgentOptions, type UseVoiceAgentReturn } from "./use-voice-agent";
export { useVoiceInput, type UseVoiceInputOptions, type UseVoiceInputReturn } from "./use-voice-input";
export {
  VoiceClient,
  WebSocketVoiceTransport,
  type TranscriptMessage,
  type VoiceAudioFormat,
  type VoiceAudioInput,
  type VoiceClientEvent,
  type VoiceClientEventMap,
  type VoiceClientOptions,
  type VoiceConnectionDiagnostic,
  type VoiceError,
  type VoiceErrorCode,
  type VoiceErrorStage,
  type VoicePipelineMetrics,
  type VoiceRole,
  type VoiceStatus,
  type VoiceTransport,
  type VoiceTransportCloseInfo,
  type VoiceTurnMetrics,
  type VoiceTurnOutcome,
  type VoiceTurnSource
} from "agents/voice/client";
