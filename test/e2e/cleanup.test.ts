/**
 * Unmounting and switching conversations leave nothing behind: every
 * composable of this issue, live against the fixture agents (a voice call
 * and a dictation with the fake microphone included), switched to new
 * addresses and then unmounted, while test/support/resources.ts counts open
 * WebSockets, live microphone tracks, open AudioContexts, the library's own
 * event listeners (on sockets and on VoiceClient) and pending timers.
 */
import { VoiceClient } from "agents/voice/client";
import { describe, expect, it, vi } from "vitest";
import { nextTick, ref } from "vue";
import { useAgent, useAgentChat, useAgentToolEvents } from "../../src";
import { useVoiceAgent, useVoiceInput } from "../../src/voice";
import { USER_TRANSCRIPT, voiceReply } from "../fixtures/worker/src/voice-script";
import { CHAT_AGENT, agentHost, uniqueName } from "../support/e2e";
import { mountComposable } from "../support/mount";
import { trackResources } from "../support/resources";

/** vi.waitFor with room for real-time audio (0.6 s of it per utterance) on a busy machine. */
const eventually = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 10_000, interval: 50 });

describe("cleanup", () => {
  it("switching conversations and unmounting release sockets, microphone tracks, audio contexts, listeners and timers", async () => {
    const tracker = trackResources({ emitters: [VoiceClient.prototype] });
    try {
      const host = agentHost();
      const runner = ref(uniqueName("runner"));
      const child = ref(uniqueName("child"));
      const voiceName = ref(uniqueName("voice"));
      const { result, unmount } = mountComposable(() => {
        const agent = useAgent({ agent: "ToolRunnerAgent", name: runner, host });
        const subChat = useAgentChat({
          client: { agent: "ChatRoomParent", name: uniqueName("parent"), host, sub: () => [{ agent: CHAT_AGENT, name: child.value }] }
        });
        return {
          agent,
          events: useAgentToolEvents({ agent }),
          chat: useAgentChat({ agent }),
          subChat,
          subEvents: useAgentToolEvents({ agent: subChat }),
          voice: useVoiceAgent({ agent: "VoiceFixtureAgent", name: voiceName, host }),
          dictation: useVoiceInput({ agent: "DictationAgent", name: uniqueName("dictation"), host })
        };
      });
      const { agent, subChat, voice, dictation } = result;
      const allOpen = async () =>
        eventually(() => {
          expect(agent.status.value).toBe("open");
          expect(subChat.connectionStatus.value).toBe("open");
          expect(voice.connected.value).toBe(true);
        });

      await allOpen();
      await voice.startCall();
      await eventually(async () => {
        await dictation.start();
        expect(dictation.isListening.value).toBe(true);
      });
      await eventually(() => {
        expect(dictation.transcript.value).toBe(USER_TRANSCRIPT);
        expect(voice.transcript.value.at(-1)?.text).toBe(voiceReply(USER_TRANSCRIPT));
      });
      const during = tracker.held();
      // Four sockets (agent, sub-agent chat, voice, dictation); two calls, each a track and an audio context.
      expect(during).toMatchObject({ sockets: 4, tracks: 2, audioContexts: 2 });
      expect(during.listeners.length).toBeGreaterThan(0);
      // PartySocket's uptime timers of the fresh sockets: the timer count sees the clients' timers.
      expect(during.timers.length).toBeGreaterThan(0);

      // Switch every address: the old sockets close, the voice call ends with its client.
      runner.value = uniqueName("runner");
      child.value = uniqueName("child");
      voiceName.value = uniqueName("voice");
      await nextTick();
      await allOpen();
      await eventually(() => expect(tracker.held()).toMatchObject({ sockets: 4, tracks: 1, audioContexts: 1 }));
      expect(tracker.held().listeners).toHaveLength(during.listeners.length);
      await voice.startCall();
      await eventually(() => expect(voice.status.value).toBe("listening"));

      unmount();
      await eventually(() => {
        const held = tracker.held();
        expect({ sockets: held.sockets, tracks: held.tracks, audioContexts: held.audioContexts }).toEqual({
          sockets: 0,
          tracks: 0,
          audioContexts: 0
        });
        expect(held.listeners, "listeners the library left").toEqual([]);
        expect(held.timers, "timers still pending").toEqual([]);
      });
      // The counts counted: the switch made a second socket for each address, a second call.
      expect(tracker.created()).toEqual({ sockets: 7, tracks: 3, audioContexts: 3 });
    } finally {
      tracker.restore();
    }
  });
});
