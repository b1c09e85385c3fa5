/**
 * useVoiceAgent and useVoiceInput against real voice agents (`withVoice`,
 * `withVoiceInput` from `agents/voice`) under `wrangler dev`, with scripted
 * speech providers (test/fixtures/worker/src/voice-script.ts) and Chromium's
 * fake microphone (a tone with beeps; see test/support/browser.ts).
 */
import { VoiceClient } from "agents/voice/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { nextTick, ref, watch } from "vue";
import { useVoiceAgent, useVoiceInput, type UseVoiceAgentOptions } from "../../src/voice";
import {
  INTERIM_TEXT,
  SPEECH_BYTES_NEEDED,
  SPEECH_PEAK_NEEDED,
  USER_TRANSCRIPT,
  textFromSamples,
  voiceReply
} from "../fixtures/worker/src/voice-script";
import { agentHost, readLog, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";
import { type ResourceTracker, trackResources } from "../support/resources";

/** vi.waitFor with room for real-time audio (0.6 s of it per utterance) on a busy machine. */
const eventually = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 10_000, interval: 50 });

const VOICE = "VoiceFixtureAgent";
const DICTATION = "DictationAgent";
const REPLY = voiceReply(USER_TRANSCRIPT);

let tracker: ResourceTracker | undefined;
let restorePlayback: (() => void) | undefined;
afterEach(() => {
  tracker?.restore();
  tracker = undefined;
  restorePlayback?.();
  restorePlayback = undefined;
});

/** The samples of every buffer the page schedules for playback, in order. */
function recordPlayback(): Float32Array[] {
  const played: Float32Array[] = [];
  const start = AudioBufferSourceNode.prototype.start;
  AudioBufferSourceNode.prototype.start = function (this: AudioBufferSourceNode, ...args: Parameters<AudioBufferSourceNode["start"]>) {
    if (this.buffer) played.push(this.buffer.getChannelData(0).slice());
    return start.apply(this, args);
  };
  restorePlayback = () => {
    AudioBufferSourceNode.prototype.start = start;
  };
  return played;
}

function openVoice(name: UseVoiceAgentOptions["name"], options: Omit<UseVoiceAgentOptions, "agent" | "name"> = {}) {
  return mountComposable(() => useVoiceAgent({ agent: VOICE, name, host: agentHost(), ...options }));
}

describe("useVoiceAgent: a call", () => {
  it("fake microphone audio in, the scripted transcript and the scripted reply's audio out", async () => {
    tracker = trackResources();
    const played = recordPlayback();
    const name = uniqueName("voice");
    const { result: voice, unmount } = openVoice(name);
    const statuses: string[] = [];
    const interims: Array<string | null> = [];
    let loudest = 0;
    watch(voice.status, (status) => statuses.push(status), { flush: "sync" });
    watch(voice.interimTranscript, (text) => interims.push(text), { flush: "sync" });
    watch(voice.audioLevel, (level) => (loudest = Math.max(loudest, level)), { flush: "sync" });

    await eventually(() => expect(voice.connected.value).toBe(true));
    expect(voice.status.value).toBe("idle");
    await voice.startCall();
    await eventually(() =>
      expect(voice.transcript.value.map(({ role, text }) => ({ role, text }))).toEqual([
        { role: "user", text: USER_TRANSCRIPT },
        { role: "assistant", text: REPLY }
      ])
    );
    // The reply's PCM reached the page and was scheduled; its samples spell the reply.
    await eventually(() => expect(textFromSamples(played.flatMap((samples) => [...samples]))).toBe(REPLY));
    await eventually(() => expect(voice.status.value).toBe("listening"));
    expect(statuses).toEqual(expect.arrayContaining(["listening", "thinking", "speaking"]));
    expect(interims).toContain(INTERIM_TEXT);
    expect(voice.interimTranscript.value).toBeNull();
    expect(loudest).toBeGreaterThan(0);
    await eventually(() => expect(voice.turnMetrics.value).toMatchObject({ source: "speech", outcome: "completed" }));
    expect(voice.error.value).toBeNull();

    // What the agent heard was the microphone's audio, not silence.
    const heard = await waitForLog(name, (entry) => entry.kind === "stt-heard", { agent: VOICE });
    expect(heard.bytes).toBeGreaterThanOrEqual(SPEECH_BYTES_NEEDED);
    expect(heard.peak).toBeGreaterThanOrEqual(SPEECH_PEAK_NEEDED);
    expect((await readLog(name, VOICE)).filter((entry) => entry.kind === "tts").map((entry) => entry.text)).toEqual([REPLY]);
    expect(tracker.held()).toMatchObject({ tracks: 1, audioContexts: 1 });

    voice.endCall();
    expect(voice.status.value).toBe("idle");
    await waitForLog(name, (entry) => entry.kind === "call-end", { agent: VOICE });
    // The call's microphone and audio are released; the socket stays open.
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0, sockets: 1 }));
    expect(voice.connected.value).toBe(true);
    unmount();
  });

  it("mute: isMuted, audioLevel 0, and nothing reaches the agent until unmuted", async () => {
    const name = uniqueName("mute");
    const { result: voice, unmount } = openVoice(name);
    await eventually(() => expect(voice.connected.value).toBe(true));
    voice.toggleMute();
    expect(voice.isMuted.value).toBe(true);
    await voice.startCall();
    await waitForLog(name, (entry) => entry.kind === "stt-session", { agent: VOICE });
    // Proving an absence needs a window: unmuted, a second brings ten chunks of audio.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await readLog(name, VOICE)).filter((entry) => entry.kind === "frame" && entry.type === "binary")).toEqual([]);
    expect(voice.audioLevel.value).toBe(0);
    expect(voice.transcript.value).toEqual([]);

    voice.toggleMute();
    expect(voice.isMuted.value).toBe(false);
    await eventually(() => expect(voice.transcript.value[0]?.text).toBe(USER_TRANSCRIPT));
    unmount();
  });

  it("sendText runs a text turn without a call; sendJSON reaches the agent and its answer lands in lastCustomMessage", async () => {
    const name = uniqueName("text");
    const { result: voice, unmount } = openVoice(name);
    await eventually(() => expect(voice.connected.value).toBe(true));
    voice.sendText("what is the tide");
    await eventually(() =>
      expect(voice.transcript.value.map(({ role, text }) => [role, text])).toEqual([
        ["user", "what is the tide"],
        ["assistant", voiceReply("what is the tide")]
      ])
    );
    await eventually(() => expect(voice.turnMetrics.value).toMatchObject({ source: "text" }));

    voice.sendJSON({ type: "ping", echo: 7 });
    await eventually(() => expect(voice.lastCustomMessage.value).toEqual({ type: "pong", echo: 7 }));
    const custom = await waitForLog(name, (entry) => entry.kind === "custom", { agent: VOICE });
    expect(custom.frame).toEqual({ type: "ping", echo: 7 });
    unmount();
  });
});

describe("useVoiceAgent: unmounting", () => {
  it("reply audio still being read when the component unmounts never plays and opens no AudioContext (upstream's leak)", async () => {
    tracker = trackResources();
    const played = recordPlayback();
    const { result: voice, unmount } = openVoice(uniqueName("late-audio"));
    await eventually(() => expect(voice.connected.value).toBe(true));
    // Unmount the moment the reply's audio (a Blob) is being read.
    const arrayBuffer = Blob.prototype.arrayBuffer;
    let read: Promise<ArrayBuffer> | undefined;
    Blob.prototype.arrayBuffer = function (this: Blob) {
      Blob.prototype.arrayBuffer = arrayBuffer;
      read = arrayBuffer.call(this);
      unmount();
      return read;
    };
    try {
      await voice.startCall();
      await eventually(() => expect(read).toBeDefined());
      await read;
      // Anything the read's continuation starts (an AudioContext, a buffer) starts synchronously.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(played).toEqual([]);
      await eventually(() => expect(tracker!.held()).toMatchObject({ audioContexts: 0, tracks: 0, sockets: 0 }));
      expect(tracker.openAudioContexts()).toEqual([]);
    } finally {
      Blob.prototype.arrayBuffer = arrayBuffer;
    }
  });
});

describe("useVoiceAgent: errors", () => {
  it("startCall before the socket opened waits for it and starts the call then; no error is shown (issue 29, 7)", async () => {
    tracker = trackResources();
    const name = uniqueName("early");
    const { result: voice, unmount } = openVoice(name);
    const errors: Array<string | null> = [];
    watch(voice.error, (value) => errors.push(value), { flush: "sync" });
    expect(voice.connected.value).toBe(false);
    const started = voice.startCall();
    // Asking again while it waits is the same start.
    expect(voice.startCall()).toBe(started);
    await started;
    expect(voice.connected.value).toBe(true);
    expect(tracker.created().tracks).toBeGreaterThan(0);
    await waitForLog(name, (entry) => entry.kind === "call-start", { agent: VOICE });
    await eventually(() => expect(voice.transcript.value.map(({ role }) => role)).toEqual(["user", "assistant"]));
    expect(errors.filter((value) => value !== null)).toEqual([]);
    expect(voice.error.value).toBeNull();
    unmount();
  });

  it("endCall while a start waits for the socket drops the start: no call, no microphone (issue 29, 7)", async () => {
    tracker = trackResources();
    const name = uniqueName("earlyend");
    const { result: voice, unmount } = openVoice(name);
    expect(voice.connected.value).toBe(false);
    const started = voice.startCall();
    voice.endCall();
    await started;
    await eventually(() => expect(voice.connected.value).toBe(true));
    // The agent saw the socket, and a later call starts normally: the dropped start never went out.
    await waitForLog(name, (entry) => entry.kind === "connect", { agent: VOICE });
    expect((await readLog(name, VOICE)).some((entry) => entry.kind === "call-start")).toBe(false);
    expect(tracker.created().tracks).toBe(0);
    expect(voice.status.value).toBe("idle");
    expect(voice.error.value).toBeNull();
    unmount();
  });

  it("a refused microphone sets error and leaves no audio running", async () => {
    tracker = trackResources();
    const devices = navigator.mediaDevices;
    const getUserMedia = devices.getUserMedia;
    devices.getUserMedia = () => Promise.reject(new DOMException("Permission denied", "NotAllowedError"));
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const { result: voice, unmount } = openVoice(uniqueName("denied"));
      await eventually(() => expect(voice.connected.value).toBe(true));
      await voice.startCall();
      expect(voice.error.value).toMatch(/Microphone access denied/);
      expect(errors).toHaveBeenCalledWith("[VoiceClient] Mic error:", expect.any(DOMException));
      voice.endCall();
      await eventually(() => expect(tracker!.held().audioContexts).toBe(0));
      unmount();
    } finally {
      devices.getUserMedia = getUserMedia;
      errors.mockRestore();
    }
  });

  it("the agent's structured error (speech-to-text failed to start) reaches voiceError and ends the call", async () => {
    tracker = trackResources();
    const { result: voice, unmount } = openVoice(uniqueName("sttfail"));
    await eventually(() => expect(voice.connected.value).toBe(true));
    await voice.startCall();
    await eventually(() =>
      expect(voice.voiceError.value).toEqual({
        message: "Speech recognition failed to start",
        code: "stt_startup_failed",
        stage: "stt",
        retryable: false
      })
    );
    expect(voice.error.value).toBe("Speech recognition failed to start");
    await eventually(() => expect(voice.status.value).toBe("idle"));
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0 }));
    unmount();
  });
});

describe("useVoiceAgent: reactive options", () => {
  it("a new name replaces the client: onReconnect fires, state resets, the old call's microphone is released", async () => {
    tracker = trackResources({ emitters: [VoiceClient.prototype] });
    const first = uniqueName("before");
    const name = ref(first);
    const onReconnect = vi.fn();
    const { result: voice, unmount } = openVoice(name, { onReconnect });
    await eventually(() => expect(voice.connected.value).toBe(true));
    const firstClient = voice.client.value;
    await voice.startCall();
    await eventually(() => expect(voice.transcript.value).toHaveLength(2));
    const listenersOnFirst = tracker.held().listeners.length;
    expect(listenersOnFirst).toBeGreaterThan(0);

    const second = uniqueName("after");
    name.value = second;
    await nextTick();
    expect(onReconnect).toHaveBeenCalledTimes(1);
    expect(voice.client.value).not.toBe(firstClient);
    expect(voice.transcript.value).toEqual([]);
    expect(voice.status.value).toBe("idle");
    await eventually(() => expect(voice.connected.value).toBe(true));
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0, sockets: 1 }));
    // The old client's listeners went with it; the new one has the same set.
    expect(tracker.held().listeners).toHaveLength(listenersOnFirst);
    await waitForLog(first, (entry) => entry.kind === "close", { agent: VOICE });
    await waitForLog(second, (entry) => entry.kind === "connect", { agent: VOICE });
    unmount();
    expect(tracker.held().listeners).toEqual([]);
  });

  it("enabled: false drops the client and closes its socket; true connects a new one", async () => {
    const name = uniqueName("enabled");
    const enabled = ref(true);
    const onReconnect = vi.fn();
    const { result: voice, unmount } = openVoice(name, { enabled, onReconnect });
    await eventually(() => expect(voice.connected.value).toBe(true));
    enabled.value = false;
    await nextTick();
    expect(voice.client.value).toBeNull();
    expect(voice.connected.value).toBe(false);
    await waitForLog(name, (entry) => entry.kind === "close", { agent: VOICE });
    await voice.startCall(); // nothing to call on: resolves, does nothing
    enabled.value = true;
    await nextTick();
    await eventually(() => expect(voice.connected.value).toBe(true));
    expect(onReconnect).not.toHaveBeenCalled();
    unmount();
  });

  it("a new outputDeviceId moves playback without replacing the client", async () => {
    const deviceId = ref<string | undefined>(undefined);
    const onReconnect = vi.fn();
    const { result: voice, unmount } = openVoice(uniqueName("device"), { outputDeviceId: deviceId, onReconnect });
    await eventually(() => expect(voice.connected.value).toBe(true));
    const client = voice.client.value;
    await voice.startCall();
    expect(voice.outputDeviceError.value).toBeNull();
    deviceId.value = "no-such-output-device";
    await eventually(() => expect(voice.outputDeviceError.value).toBe("Could not switch audio output device."));
    expect(voice.client.value).toBe(client);
    expect(onReconnect).not.toHaveBeenCalled();
    unmount();
  });
});

describe("useVoiceInput", () => {
  it("start before the socket opened waits for it and starts listening then; no error is shown (issue 29, 7)", async () => {
    tracker = trackResources();
    const name = uniqueName("dictateearly");
    const { result: input, unmount } = mountComposable(() => useVoiceInput({ agent: DICTATION, name, host: agentHost() }));
    const errors: Array<string | null> = [];
    watch(input.error, (value) => errors.push(value), { flush: "sync" });
    await input.start();
    expect(tracker.created().tracks).toBeGreaterThan(0);
    await eventually(() => expect(input.isListening.value).toBe(true));
    await eventually(() => expect(input.transcript.value).toBe(USER_TRANSCRIPT));
    expect(errors.filter((value) => value !== null)).toEqual([]);
    unmount();
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0, sockets: 0 }));
  });

  it("a restart on a transcript (stop, clear, start in one tick) records the next utterance: the start waits for the server's answer to end_call", async () => {
    // The server follows a transcript with `status: "listening"` and answers
    // end_call with `status: "idle"`. Taken as the new call's, those two end
    // it locally: the server then listens to a client whose microphone is off.
    const name = uniqueName("restart");
    const { result: input, unmount } = mountComposable(() => useVoiceInput({ agent: DICTATION, name, host: agentHost() }));
    let restarted: Promise<void> | undefined;
    watch(
      input.transcript,
      (text) => {
        if (text !== USER_TRANSCRIPT || restarted) return;
        // Synchronously, inside the transcript frame's handler: before the next frame.
        input.stop();
        input.clear();
        restarted = input.start();
      },
      { flush: "sync" }
    );
    await eventually(async () => {
      await input.start();
      expect(input.isListening.value).toBe(true);
    });
    await eventually(() => expect(restarted).toBeDefined());
    await restarted;
    await eventually(() => expect(input.transcript.value).toBe(USER_TRANSCRIPT));
    const log = await readLog(name, DICTATION);
    expect(log.filter((entry) => entry.kind === "transcript")).toHaveLength(2);
    unmount();
  });

  it("dictation: start streams the microphone, utterances accumulate, clear starts over, stop releases the microphone", async () => {
    tracker = trackResources();
    const name = uniqueName("dictate");
    const { result: input, unmount } = mountComposable(() => useVoiceInput({ agent: DICTATION, name, host: agentHost() }));
    const interims: Array<string | null> = [];
    watch(input.interimTranscript, (text) => interims.push(text), { flush: "sync" });
    await eventually(() => expect(input.error.value).toBeNull());
    // The socket opens on its own; starting needs it.
    await eventually(async () => {
      await input.start();
      expect(input.error.value).toBeNull();
      expect(input.isListening.value).toBe(true);
    });
    await eventually(() => expect(input.transcript.value).toBe(USER_TRANSCRIPT));
    expect(interims).toContain(INTERIM_TEXT);
    await waitForLog(name, (entry) => entry.kind === "transcript" && entry.text === USER_TRANSCRIPT, { agent: DICTATION });

    input.stop();
    expect(input.isListening.value).toBe(false);
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0 }));

    // A second call is a second utterance: the transcript accumulates.
    await input.start();
    await eventually(() => expect(input.transcript.value).toBe(`${USER_TRANSCRIPT} ${USER_TRANSCRIPT}`));
    input.stop();
    input.clear();
    expect(input.transcript.value).toBe("");
    await input.start();
    await eventually(() => expect(input.transcript.value).toBe(USER_TRANSCRIPT));
    input.toggleMute();
    expect(input.isMuted.value).toBe(true);
    expect(input.audioLevel.value).toBe(0);
    unmount();
    await eventually(() => expect(tracker!.held()).toMatchObject({ tracks: 0, audioContexts: 0, sockets: 0 }));
  });
});
