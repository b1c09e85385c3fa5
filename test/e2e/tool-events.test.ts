/**
 * useAgentToolEvents against a real agent tool run: `ToolRunnerAgent`'s
 * `research` tool (`agentTool` from `agents/agent-tools`) runs a
 * `ResearchAgent` sub-agent turn, whose events reach the parent's clients as
 * `agent-tool-event` frames, live and replayed on every connect.
 */
import type { UIMessage } from "ai";
import { AgentClient } from "agents/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { computed, nextTick, shallowRef, watch } from "vue";
import { useAgent, useAgentChat, useAgentToolEvents, type AgentToolRunState, type SharedAgentConnection } from "../../src";
import type { Script } from "../fixtures/worker/src/script";
import { agentHost, post, uniqueName } from "../support/e2e";
import { mountComposable } from "../support/mount";
import { whenSettled } from "../support/chat";

const RUNNER = "ToolRunnerAgent";
type Part = UIMessage["parts"][number];

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
});

function mount<T>(setup: () => T): T {
  const mounted = mountComposable(setup);
  cleanup.push(mounted.unmount);
  return mounted.result;
}

function client(name: string): AgentClient {
  const socket = new AgentClient({ agent: RUNNER, name, host: agentHost() });
  cleanup.push(() => socket.close());
  return socket;
}

/** A chat turn whose model calls `research` once; the helper replies `reply`. */
function researchTurn(topic: string, reply: string, helper: Script = {}) {
  const script: Script = { toolCalls: [{ toolName: "research", input: { topic, script: { text: reply, ...helper } } }] };
  return [{ text: `research ${topic}` }, { body: { script } }] as const;
}

const textOf = (run: AgentToolRunState<Part> | undefined) =>
  (run?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

/** The tool call id of the `research` call in a transcript. */
function researchCallId(messages: readonly UIMessage[]): string {
  const part = messages.flatMap((message) => message.parts).find((p) => p.type === "tool-research");
  expect(part, "a research tool part").toBeDefined();
  return (part as { toolCallId: string }).toolCallId;
}

/** Runs one research turn on a chat over `socket` and returns its tool call id. */
async function runResearch(source: SharedAgentConnection, topic: string, reply: string): Promise<string> {
  const chat = mount(() => useAgentChat({ agent: source }));
  await chat.sendMessage(...researchTurn(topic, reply));
  await whenSettled(chat);
  return researchCallId(chat.messages.value);
}

describe("useAgentToolEvents", () => {
  it("a real agent tool run on the chat's own connection: running with streamed parts, then completed, grouped by its tool call", async () => {
    const name = uniqueName("run");
    const { chat, events, countForCall } = mount(() => {
      const chat = useAgentChat({ client: { agent: RUNNER, name, host: agentHost() } });
      const events = useAgentToolEvents<Part>({ agent: chat });
      return { chat, events, countForCall: (id: string) => computed(() => events.getRunsForToolCall(id).length) };
    });
    const seen: Array<{ status: string; text: string }> = [];
    watch(
      () => Object.values(events.runsById.value)[0],
      (run) => run && seen.push({ status: run.status, text: textOf(run) }),
      { flush: "sync" }
    );

    await chat.sendMessage(...researchTurn("tides", "Tides follow the moon.", { chunkDelayMs: 60 }));
    await whenSettled(chat);
    const callId = researchCallId(chat.messages.value);
    const [run] = events.getRunsForToolCall(callId);
    expect(run).toMatchObject({
      runId: `agent-tool:${callId}`,
      agentType: "ResearchAgent",
      parentToolCallId: callId,
      display: { name: "Researcher" },
      status: "completed",
      summary: "Tides follow the moon.",
      subAgent: { agent: "ResearchAgent", name: `agent-tool:${callId}` }
    });
    expect(String(run!.inputPreview)).toContain("tides");
    expect(textOf(run)).toBe("Tides follow the moon.");
    expect(events.runsById.value).toEqual({ [run!.runId]: run });
    expect(events.runsByToolCallId.value).toEqual({ [callId]: [run] });
    expect(events.unboundRuns.value).toEqual([]);
    expect(events.getRunsForToolCall("no-such-call")).toEqual([]);
    // It streamed: seen running with part of the text before it completed.
    expect(seen[0]).toEqual({ status: "running", text: "" });
    expect(seen.some(({ status, text }) => status === "running" && text.length > 0 && text !== "Tides follow the moon.")).toBe(true);
    expect(seen.at(-1)).toEqual({ status: "completed", text: "Tides follow the moon." });
    // The tool's output in the parent's transcript is the run's summary.
    const part = chat.messages.value.flatMap((message) => message.parts).find((p) => p.type === "tool-research");
    expect(part).toMatchObject({ state: "output-available", output: "Tides follow the moon." });
    expect(countForCall(callId).value).toBe(1);
  });

  it("a connect replays stored runs (useAgent's return); a reconnect's replay is skipped, not doubled", async () => {
    const name = uniqueName("replay");
    const owner = client(name);
    const callId = await runResearch(owner, "reefs", "Reefs are alive.");

    let toolFrames = 0;
    const { agent, events } = mount(() => {
      const agent = useAgent({
        agent: RUNNER,
        name,
        host: agentHost(),
        onMessage: (event) => {
          if (String(event.data).includes('"agent-tool-event"')) toolFrames++;
        }
      });
      return { agent, events: useAgentToolEvents<Part>({ agent }) };
    });
    await vi.waitFor(() => expect(events.getRunsForToolCall(callId)[0]?.status).toBe("completed"));
    expect(textOf(events.getRunsForToolCall(callId)[0])).toBe("Reefs are alive.");
    const framesPerReplay = toolFrames;
    expect(framesPerReplay).toBeGreaterThan(3);
    const before = events.runsById.value;

    agent.reconnect();
    await vi.waitFor(() => expect(toolFrames).toBe(2 * framesPerReplay));
    await nextTick();
    // Every replayed event was already seen: the state did not change at all.
    expect(events.runsById.value).toBe(before);
    expect(textOf(events.getRunsForToolCall(callId)[0])).toBe("Reefs are alive.");
  });

  it("an AgentClient as the source; resetLocalState forgets the runs until the next connect replays them", async () => {
    const name = uniqueName("reset");
    const socket = client(name);
    const events = mount(() => useAgentToolEvents<Part>({ agent: socket }));
    const callId = await runResearch(socket, "kelp", "Kelp grows fast.");
    await vi.waitFor(() => expect(events.getRunsForToolCall(callId)[0]?.status).toBe("completed"));

    events.resetLocalState();
    expect(events.runsById.value).toEqual({});
    expect(events.getRunsForToolCall(callId)).toEqual([]);
    socket.reconnect();
    await vi.waitFor(() => expect(textOf(events.getRunsForToolCall(callId)[0])).toBe("Kelp grows fast."));
  });

  it("a run started from server code, bound to no tool call, is in unboundRuns", async () => {
    const name = uniqueName("unbound");
    const socket = client(name);
    const events = mount(() => useAgentToolEvents<Part>({ agent: socket }));
    await socket.ready;
    const response = await post(name, "run-agent-tool", { topic: "currents", script: { text: "Currents carry heat." } }, RUNNER);
    expect(response.ok).toBe(true);
    expect(await response.json()).toMatchObject({ status: "completed", summary: "Currents carry heat." });
    await vi.waitFor(() => expect(events.unboundRuns.value[0]?.status).toBe("completed"));
    expect(textOf(events.unboundRuns.value[0])).toBe("Currents carry heat.");
    expect(events.runsByToolCallId.value).toEqual({});
  });

  it("switching the source starts from the new socket's runs and no longer hears the old one", async () => {
    const a = client(uniqueName("conv-a"));
    const b = client(uniqueName("conv-b"));
    const source = shallowRef<AgentClient>(a);
    const events = mount(() => useAgentToolEvents<Part>({ agent: source }));
    const first = await runResearch(a, "waves", "Waves carry energy.");
    await vi.waitFor(() => expect(events.getRunsForToolCall(first)).toHaveLength(1));

    source.value = b;
    await nextTick();
    expect(events.runsById.value).toEqual({});
    // A run on the conversation we left is not shown (its frames came in on
    // `a` before the chat there settled).
    const second = await runResearch(a, "foam", "Foam is air.");
    expect(events.runsById.value).toEqual({});

    source.value = a;
    await nextTick();
    a.reconnect();
    await vi.waitFor(() => {
      expect(events.getRunsForToolCall(first)[0]?.status).toBe("completed");
      expect(events.getRunsForToolCall(second)[0]?.status).toBe("completed");
    });
  });
});
