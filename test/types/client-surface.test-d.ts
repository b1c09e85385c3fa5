/** Types of the rest of upstream's client surface: tool events, MCP state, sub-agents, transports, voice. */
import type { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import { type ComputedRef, type ShallowRef, ref } from "vue";
import {
  type AgentSocket,
  type AgentToolRunState,
  type MCPServersState,
  type SubAgentStep,
  useAgent,
  useAgentChat,
  useAgentToolEvents
} from "../../src";
import {
  type TranscriptMessage,
  type VoiceClient,
  type VoiceError,
  type VoiceStatus,
  useVoiceAgent,
  useVoiceInput
} from "../../src/voice";

type Part = UIMessage["parts"][number];

describe("useAgentToolEvents", () => {
  it("types the runs with the part type, from any connection form", () => {
    const agent = useAgent({ agent: "ToolRunnerAgent" });
    const events = useAgentToolEvents<Part>({ agent });
    expectTypeOf(events.runsById).toEqualTypeOf<ComputedRef<Record<string, AgentToolRunState<Part>>>>();
    expectTypeOf(events.runsByToolCallId.value).toEqualTypeOf<Record<string, AgentToolRunState<Part>[]>>();
    expectTypeOf(events.unboundRuns.value).toEqualTypeOf<AgentToolRunState<Part>[]>();
    expectTypeOf(events.getRunsForToolCall("c")).toEqualTypeOf<AgentToolRunState<Part>[]>();
    useAgentToolEvents({ agent: useAgentChat({ client: { agent: "ToolRunnerAgent" } }) });
    useAgentToolEvents({ agent: {} as AgentClient });
    useAgentToolEvents({ agent: () => null });
    // @ts-expect-error: not a connection
    useAgentToolEvents({ agent: 42 });
  });
});

describe("useAgent: MCP, sub-agents, transports", () => {
  it("types mcpServers, onMcpUpdate, path and the new options", () => {
    const agent = useAgent({
      agent: "Inbox",
      sub: ref<SubAgentStep[]>([{ agent: "ChatAgent", name: "abc" }]),
      transport: "capnweb",
      enabled: () => true,
      onMcpUpdate: (state) => expectTypeOf(state).toEqualTypeOf<MCPServersState>()
    });
    expectTypeOf(agent.mcpServers).toEqualTypeOf<Readonly<ShallowRef<MCPServersState | undefined>>>();
    expectTypeOf(agent.path).toEqualTypeOf<ComputedRef<ReadonlyArray<SubAgentStep>>>();
    // @ts-expect-error: not a transport
    useAgent({ agent: "A", transport: "grpc" });
    // @ts-expect-error: a step needs a name
    useAgent({ agent: "A", sub: [{ agent: "ChatAgent" }] });
  });

  it("useAgentChat takes sub in its client options and returns the socket it is on", () => {
    const chat = useAgentChat({ client: { agent: "Inbox", sub: () => [{ agent: "ChatAgent", name: "abc" }], transport: "capnweb" } });
    expectTypeOf(chat.client.value).toEqualTypeOf<AgentSocket | null>();
  });
});

describe("voice", () => {
  it("useVoiceAgent: reactive options, shallow refs", () => {
    const voice = useVoiceAgent({ agent: "VoiceAgent", name: ref("n"), silenceThreshold: () => 0.1, enabled: ref(false), onReconnect: () => {} });
    expectTypeOf(voice.status.value).toEqualTypeOf<VoiceStatus>();
    expectTypeOf(voice.transcript.value).toEqualTypeOf<TranscriptMessage[]>();
    expectTypeOf(voice.voiceError.value).toEqualTypeOf<VoiceError | null>();
    expectTypeOf(voice.client.value).toEqualTypeOf<VoiceClient | null>();
    expectTypeOf(voice.startCall).returns.toEqualTypeOf<Promise<void>>();
    // @ts-expect-error: read-only to the caller
    voice.isMuted.value = true;
  });

  it("useVoiceInput: the transcript is a string", () => {
    const input = useVoiceInput({ agent: "DictationAgent", host: ref("h") });
    expectTypeOf(input.transcript.value).toEqualTypeOf<string>();
    expectTypeOf(input.isListening.value).toEqualTypeOf<boolean>();
    // @ts-expect-error: no TTS tuning on dictation
    useVoiceInput({ agent: "DictationAgent", interruptThreshold: 1 });
  });
});
