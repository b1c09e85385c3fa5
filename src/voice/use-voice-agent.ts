import type {
  TranscriptMessage,
  VoiceClient,
  VoiceClientOptions,
  VoiceError,
  VoicePipelineMetrics,
  VoiceStatus,
  VoiceTurnMetrics
} from "agents/voice/client";
import { type MaybeRefOrGetter, type ShallowRef, shallowReadonly, shallowRef, toValue, watch } from "vue";
import { assertBrowser, warnOutsideScope } from "../lifecycle";

/** The message `VoiceClient` gives every microphone failure (agents 0.32). */
const MICROPHONE_FAILED = "Microphone access denied. Please allow microphone access and try again.";
import { keyPart, useVoiceConnection } from "./voice-connection";

type ReactiveFields =
  | "agent"
  | "name"
  | "host"
  | "query"
  | "silenceThreshold"
  | "silenceDurationMs"
  | "interruptThreshold"
  | "interruptChunks"
  | "outputDeviceId";

/**
 * Options of {@link useVoiceAgent}: `VoiceClient`'s, where the address and
 * tuning may be refs or getters. Changing `agent`, `name`, `host`, `query` or
 * a threshold replaces the client (the call ends, `onReconnect` fires);
 * changing `outputDeviceId` only moves playback to that device.
 */
export interface UseVoiceAgentOptions extends Omit<VoiceClientOptions, ReactiveFields> {
  /** The voice agent's class name, e.g. `"MyVoiceAgent"` (kebab-cased in the URL). */
  agent: MaybeRefOrGetter<string>;
  /** The instance name. Defaults to `"default"`. */
  name?: MaybeRefOrGetter<string | undefined>;
  /** The worker's host. Defaults to the page's host. */
  host?: MaybeRefOrGetter<string | undefined>;
  /** Query parameters of the WebSocket URL (e.g. an auth token). */
  query?: MaybeRefOrGetter<Record<string, string | null | undefined> | undefined>;
  /** RMS level below which the microphone counts as silent. Default `0.04`. */
  silenceThreshold?: MaybeRefOrGetter<number | undefined>;
  /** Milliseconds of silence before `end_of_speech` is sent. Default `500`. */
  silenceDurationMs?: MaybeRefOrGetter<number | undefined>;
  /** RMS level of speech that interrupts the agent's playback. Default `0.05`. */
  interruptThreshold?: MaybeRefOrGetter<number | undefined>;
  /** Consecutive loud chunks needed to interrupt. Default `2`. */
  interruptChunks?: MaybeRefOrGetter<number | undefined>;
  /** `deviceId` of the audio output for the agent's voice. Default `"default"`. */
  outputDeviceId?: MaybeRefOrGetter<string | undefined>;
  /** Whether to connect at all; `false` drops the client (ending any call). Default `true`. */
  enabled?: MaybeRefOrGetter<boolean | undefined>;
  /** Called when a changed address or tuning replaced the client. */
  onReconnect?: () => void;
}

/** What {@link useVoiceAgent} returns. */
export interface UseVoiceAgentReturn {
  /** `idle`, `listening`, `thinking` or `speaking`, as the agent reports it. */
  status: Readonly<ShallowRef<VoiceStatus>>;
  /** The conversation: final user transcripts and the agent's replies (streamed in). */
  transcript: Readonly<ShallowRef<TranscriptMessage[]>>;
  /** The user's words so far while they speak (streaming speech-to-text), or `null`. */
  interimTranscript: Readonly<ShallowRef<string | null>>;
  /** Latency figures of the last successful speech turn, or `null`. */
  metrics: Readonly<ShallowRef<VoicePipelineMetrics | null>>;
  /** The last turn's summary (any outcome, speech or text), or `null`. */
  turnMetrics: Readonly<ShallowRef<VoiceTurnMetrics | null>>;
  /** The microphone's level (RMS, 0 to 1); `0` while muted or out of a call. */
  audioLevel: Readonly<ShallowRef<number>>;
  /** Whether the microphone is muted (it stays open; nothing is sent). */
  isMuted: Readonly<ShallowRef<boolean>>;
  /** Whether the socket is open. */
  connected: Readonly<ShallowRef<boolean>>;
  /** The last error message (connection, microphone, or the agent's), or `null`. */
  error: Readonly<ShallowRef<string | null>>;
  /** The last structured error the agent sent (`code`, `stage`, `retryable`), or `null`. */
  voiceError: Readonly<ShallowRef<VoiceError | null>>;
  /** Why the chosen output device could not be used, or `null`. */
  outputDeviceError: Readonly<ShallowRef<string | null>>;
  /** The last message from the agent outside the voice protocol. */
  lastCustomMessage: Readonly<ShallowRef<unknown>>;
  /** The live `VoiceClient`, or `null` while disabled or after the scope ended. */
  client: Readonly<ShallowRef<VoiceClient | null>>;
  /**
   * Starts a call: asks for the microphone and streams it to the agent.
   * Called before the socket opened, it waits for the socket and starts then;
   * `endCall()`, a replaced or disabled client, or unmounting drops that wait
   * (the promise then resolves without a call).
   */
  startCall: () => Promise<void>;
  /** Ends the call (or a start still waiting for the socket) and releases the microphone and audio. */
  endCall: () => void;
  /** Mutes or unmutes the microphone. */
  toggleMute: () => void;
  /** Sends a typed message; the agent answers it like speech (with audio during a call). */
  sendText: (text: string) => void;
  /** Sends an app-level JSON message (the agent's `onMessage` gets it). */
  sendJSON: (data: Record<string, unknown>) => void;
}

/**
 * Talk to a voice agent (`withVoice` from `agents/voice`): microphone audio
 * goes to the agent, its transcript and spoken replies come back. Wraps
 * `VoiceClient` from `agents/voice/client`, mirroring its state in shallow
 * refs. The socket opens at once; `startCall()` asks for the microphone
 * (once the socket is open, if called before).
 * When the component unmounts (or the effect scope stops) the call ends and
 * the microphone, the audio context and the socket are released. Browser
 * only: on the server it throws at once.
 */
export function useVoiceAgent(options: UseVoiceAgentOptions): UseVoiceAgentReturn {
  assertBrowser("useVoiceAgent");
  warnOutsideScope("useVoiceAgent");

  const status = shallowRef<VoiceStatus>("idle");
  const transcript = shallowRef<TranscriptMessage[]>([]);
  const interimTranscript = shallowRef<string | null>(null);
  const metrics = shallowRef<VoicePipelineMetrics | null>(null);
  const turnMetrics = shallowRef<VoiceTurnMetrics | null>(null);
  const audioLevel = shallowRef(0);
  const isMuted = shallowRef(false);
  const connected = shallowRef(false);
  const error = shallowRef<string | null>(null);
  const voiceError = shallowRef<VoiceError | null>(null);
  const outputDeviceError = shallowRef<string | null>(null);
  const lastCustomMessage = shallowRef<unknown>(null);

  const connection = useVoiceConnection({
    key: () =>
      [
        options.agent,
        options.name,
        options.host,
        options.silenceThreshold,
        options.silenceDurationMs,
        options.interruptThreshold,
        options.interruptChunks,
        options.query
      ]
        .map(keyPart)
        .join("\0"),
    enabled: () => toValue(options.enabled) ?? true,
    clientOptions: () => {
      const { enabled: _enabled, onReconnect: _onReconnect, ...rest } = options;
      const query = toValue(options.query);
      return {
        ...rest,
        agent: toValue(options.agent),
        name: toValue(options.name),
        host: toValue(options.host),
        query: query && { ...query },
        silenceThreshold: toValue(options.silenceThreshold),
        silenceDurationMs: toValue(options.silenceDurationMs),
        interruptThreshold: toValue(options.interruptThreshold),
        interruptChunks: toValue(options.interruptChunks),
        outputDeviceId: toValue(options.outputDeviceId)
      };
    },
    reset: () => {
      status.value = "idle";
      transcript.value = [];
      interimTranscript.value = null;
      metrics.value = null;
      turnMetrics.value = null;
      audioLevel.value = 0;
      isMuted.value = false;
      connected.value = false;
      error.value = null;
      voiceError.value = null;
      outputDeviceError.value = null;
      lastCustomMessage.value = null;
    },
    listeners: {
      statuschange: (value) => (status.value = value),
      transcriptchange: (value) => (transcript.value = value),
      interimtranscript: (value) => (interimTranscript.value = value),
      metricschange: (value) => (metrics.value = value),
      turnmetrics: (value) => (turnMetrics.value = value),
      audiolevelchange: (value) => (audioLevel.value = value),
      mutechange: (value) => (isMuted.value = value),
      connectionchange: (value) => (connected.value = value),
      error: (value) => {
        // `VoiceClient` reports a microphone that was still starting when the agent's error ended the
        // call (its worklet load aborts) as "access denied"; the agent's error is what ended it.
        if (value === MICROPHONE_FAILED && voiceError.value && status.value === "idle") return;
        error.value = value;
        if (value === null) voiceError.value = null;
      },
      voiceerror: (value) => (voiceError.value = value),
      outputdeviceerror: (value) => (outputDeviceError.value = value),
      custommessage: (value) => (lastCustomMessage.value = value)
    },
    onReplaced: () => options.onReconnect?.()
  });

  const client = connection.client;
  watch(
    () => toValue(options.outputDeviceId),
    (deviceId) => void client.value?.setOutputDevice(deviceId)
  );

  return {
    status: shallowReadonly(status),
    transcript: shallowReadonly(transcript),
    interimTranscript: shallowReadonly(interimTranscript),
    metrics: shallowReadonly(metrics),
    turnMetrics: shallowReadonly(turnMetrics),
    audioLevel: shallowReadonly(audioLevel),
    isMuted: shallowReadonly(isMuted),
    connected: shallowReadonly(connected),
    error: shallowReadonly(error),
    voiceError: shallowReadonly(voiceError),
    outputDeviceError: shallowReadonly(outputDeviceError),
    lastCustomMessage: shallowReadonly(lastCustomMessage),
    client,
    startCall: connection.start,
    endCall: () => {
      connection.cancelStart();
      client.value?.endCall();
    },
    toggleMute: () => client.value?.toggleMute(),
    sendText: (text) => client.value?.sendText(text),
    sendJSON: (data) => client.value?.sendJSON(data)
  };
}
