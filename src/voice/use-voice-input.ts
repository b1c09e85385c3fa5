import type { TranscriptMessage, VoiceTurnMetrics } from "agents/voice/client";
import { type MaybeRefOrGetter, type ShallowRef, shallowReadonly, shallowRef, toValue } from "vue";
import { assertBrowser, warnOutsideScope } from "../lifecycle";
import { keyPart, useVoiceConnection } from "./voice-connection";

/** Options of {@link useVoiceInput}; each may be a ref or getter (a change replaces the connection). */
export interface UseVoiceInputOptions {
  /** The dictation agent's class name (`withVoiceInput` on the server). */
  agent: MaybeRefOrGetter<string>;
  /** The instance name. Defaults to `"default"`. */
  name?: MaybeRefOrGetter<string | undefined>;
  /** The worker's host. Defaults to the page's host. */
  host?: MaybeRefOrGetter<string | undefined>;
  /** RMS level below which the microphone counts as silent. Default `0.04`. */
  silenceThreshold?: MaybeRefOrGetter<number | undefined>;
  /** Milliseconds of silence before `end_of_speech` is sent. Default `500`. */
  silenceDurationMs?: MaybeRefOrGetter<number | undefined>;
}

/** What {@link useVoiceInput} returns. */
export interface UseVoiceInputReturn {
  /** Everything said since the start (or the last `clear()`), utterances joined by spaces. */
  transcript: Readonly<ShallowRef<string>>;
  /** The words of the utterance in progress (streaming speech-to-text), or `null`. */
  interimTranscript: Readonly<ShallowRef<string | null>>;
  /** The last utterance's summary, or `null`. */
  turnMetrics: Readonly<ShallowRef<VoiceTurnMetrics | null>>;
  /** Whether the microphone is streaming to the agent. */
  isListening: Readonly<ShallowRef<boolean>>;
  /** The microphone's level (RMS, 0 to 1), for a meter. */
  audioLevel: Readonly<ShallowRef<number>>;
  /** Whether the microphone is muted. */
  isMuted: Readonly<ShallowRef<boolean>>;
  /** The last error message, or `null`. */
  error: Readonly<ShallowRef<string | null>>;
  /**
   * Asks for the microphone and starts streaming it. Called before the socket
   * opened, it waits for the socket and starts then; `stop()`, a replaced
   * connection or unmounting drops that wait (the promise then resolves).
   */
  start: () => Promise<void>;
  /** Stops listening (or a start still waiting for the socket) and releases the microphone. */
  stop: () => void;
  /** Mutes or unmutes (the microphone stays open). */
  toggleMute: () => void;
  /** Empties `transcript`; what is said next starts a new one. */
  clear: () => void;
}

/**
 * Dictation: the microphone goes to a speech-to-text agent (`withVoiceInput`
 * from `agents/voice`) and what the user says accumulates in `transcript`.
 * Replies and synthesized speech play no part. Releases the microphone, the
 * audio context and the socket when the scope ends. Browser only.
 */
export function useVoiceInput(options: UseVoiceInputOptions): UseVoiceInputReturn {
  assertBrowser("useVoiceInput");
  warnOutsideScope("useVoiceInput");

  const transcript = shallowRef("");
  const interimTranscript = shallowRef<string | null>(null);
  const turnMetrics = shallowRef<VoiceTurnMetrics | null>(null);
  const isListening = shallowRef(false);
  const audioLevel = shallowRef(0);
  const isMuted = shallowRef(false);
  const error = shallowRef<string | null>(null);
  // The client's transcript, and the last message `clear()` dropped (message
  // objects stay the same as the transcript grows; trimming drops the oldest).
  let messages: TranscriptMessage[] = [];
  let clearedThrough: TranscriptMessage | undefined;
  const show = () => {
    const start = clearedThrough ? messages.indexOf(clearedThrough) + 1 : 0;
    transcript.value = messages
      .slice(start)
      .filter((message) => message.role === "user")
      .map((message) => message.text)
      .join(" ");
  };

  const connection = useVoiceConnection({
    key: () =>
      [options.agent, options.name, options.host, options.silenceThreshold, options.silenceDurationMs].map(keyPart).join("\0"),
    enabled: () => true,
    clientOptions: () => ({
      agent: toValue(options.agent),
      name: toValue(options.name),
      host: toValue(options.host),
      silenceThreshold: toValue(options.silenceThreshold),
      silenceDurationMs: toValue(options.silenceDurationMs)
    }),
    reset: () => {
      isListening.value = false;
      interimTranscript.value = null;
      turnMetrics.value = null;
      audioLevel.value = 0;
      isMuted.value = false;
      error.value = null;
      messages = [];
      clearedThrough = undefined;
    },
    listeners: {
      transcriptchange: (next) => {
        messages = next;
        show();
      },
      interimtranscript: (value) => (interimTranscript.value = value),
      turnmetrics: (value) => (turnMetrics.value = value),
      audiolevelchange: (value) => (audioLevel.value = value),
      mutechange: (value) => (isMuted.value = value),
      error: (value) => (error.value = value),
      statuschange: (value) => (isListening.value = value === "listening" || value === "thinking")
    }
  });

  return {
    transcript: shallowReadonly(transcript),
    interimTranscript: shallowReadonly(interimTranscript),
    turnMetrics: shallowReadonly(turnMetrics),
    isListening: shallowReadonly(isListening),
    audioLevel: shallowReadonly(audioLevel),
    isMuted: shallowReadonly(isMuted),
    error: shallowReadonly(error),
    start: connection.start,
    stop: () => {
      connection.cancelStart();
      connection.client.value?.endCall();
    },
    toggleMute: () => connection.client.value?.toggleMute(),
    clear: () => {
      clearedThrough = messages.at(-1);
      show();
    }
  };
}
