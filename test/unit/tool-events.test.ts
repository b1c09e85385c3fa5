/**
 * useAgentToolEvents against a scripted socket, for the frame orderings a
 * real server rarely produces: replays racing live events, progress and
 * milestone parts, unstored chunks, and frames that are not tool events.
 */
import { describe, expect, it } from "vitest";
import { effectScope, nextTick, shallowRef } from "vue";
import { type AgentSocket, type AgentToolEvent, useAgentToolEvents } from "../../src";

class ScriptedSocket extends EventTarget {
  send(): void {}
  frame(data: unknown): void {
    this.dispatchEvent(new MessageEvent("message", { data: typeof data === "string" ? data : JSON.stringify(data) }));
  }
  listeners = 0;
  override addEventListener(...args: Parameters<EventTarget["addEventListener"]>): void {
    this.listeners++;
    super.addEventListener(...args);
  }
  override removeEventListener(...args: Parameters<EventTarget["removeEventListener"]>): void {
    this.listeners--;
    super.removeEventListener(...args);
  }
}

const asSocket = (socket: ScriptedSocket) => socket as unknown as AgentSocket;
const run = "run-1";
const event = (sequence: number, body: AgentToolEvent, extra: Record<string, unknown> = {}) => ({
  type: "agent-tool-event",
  parentToolCallId: "call-1",
  sequence,
  event: body,
  ...extra
});
const started = event(0, { kind: "started", runId: run, agentType: "Helper", order: 0 });
const chunk = (sequence: number, body: unknown, extra: Record<string, unknown> = {}) =>
  event(sequence, { kind: "chunk", runId: run, body: JSON.stringify(body), ...extra } as AgentToolEvent);
const text = (sequence: number, delta: string) => chunk(sequence, { type: "text-delta", id: "t", delta });

function follow(socket: ScriptedSocket | (() => ScriptedSocket | null)) {
  const scope = effectScope();
  const events = scope.run(() =>
    useAgentToolEvents({ agent: typeof socket === "function" ? () => socket() && asSocket(socket()!) : asSocket(socket) })
  )!;
  return { events, stop: () => scope.stop() };
}

const textOf = (parts: Array<{ type: string; text?: string }> | undefined) =>
  (parts ?? []).map((part) => part.text ?? "").join("");

describe("useAgentToolEvents with a scripted socket", () => {
  it("a replay racing the live stream applies each stored chunk once", () => {
    const socket = new ScriptedSocket();
    const { events, stop } = follow(socket);
    socket.frame(started);
    socket.frame(chunk(1, { type: "text-start", id: "t" }));
    socket.frame(text(2, "Hel"));
    // The connect-time replay of what already arrived, then the rest live.
    socket.frame({ ...started, replay: true });
    socket.frame({ ...chunk(1, { type: "text-start", id: "t" }), replay: true });
    socket.frame({ ...text(2, "Hel"), replay: true });
    socket.frame(text(3, "lo"));
    socket.frame(event(4, { kind: "finished", runId: run, summary: "Hello" }));
    const [state] = events.getRunsForToolCall("call-1");
    expect(textOf(state?.parts as never)).toBe("Hello");
    expect(state).toMatchObject({ status: "completed", summary: "Hello" });
    stop();
  });

  it("milestones dedupe by their own sequence, progress by its id; unstored chunks by theirs", () => {
    const socket = new ScriptedSocket();
    const { events, stop } = follow(socket);
    socket.frame(started);
    const milestone = chunk(1, { type: "data-agent-milestone", data: { name: "sources", sequence: 1, at: 10 } });
    socket.frame(milestone);
    // Replayed at another stream position: still the same milestone.
    socket.frame({ ...milestone, sequence: 5, replay: true });
    const progress = chunk(2, { type: "data-agent-progress", id: "p-1", transient: true, data: { fraction: 0.5 } });
    socket.frame(progress);
    socket.frame(progress);
    // Two progress reports that reuse one stream position are both applied.
    socket.frame(chunk(2, { type: "data-agent-progress", id: "p-2", transient: true, data: { fraction: 0.75 } }));
    socket.frame(chunk(2, { type: "text-start", id: "t" }));
    socket.frame(chunk(2, { type: "text-delta", id: "t", delta: "big" }, { unstoredId: "u-1" }));
    socket.frame(chunk(2, { type: "text-delta", id: "t", delta: "big" }, { unstoredId: "u-1" }));
    const [state] = Object.values(events.runsById.value);
    expect(state?.milestones?.map((m) => m.name)).toEqual(["sources"]);
    expect(state?.progress?.fraction).toBe(0.75);
    expect(textOf(state?.parts as never)).toBe("big");
    stop();
  });

  it("ignores frames that are not tool events, malformed JSON and binary data", () => {
    const socket = new ScriptedSocket();
    const { events, stop } = follow(socket);
    socket.frame("{not json agent-tool-event");
    socket.frame({ type: "agent-tool-event", event: { kind: "started" } });
    socket.frame({ type: "cf_agent_state", state: {} });
    socket.dispatchEvent(new MessageEvent("message", { data: new ArrayBuffer(4) }));
    expect(events.runsById.value).toEqual({});
    // A chunk for a run never started is dropped by upstream's reducer.
    socket.frame(text(1, "orphan"));
    expect(events.runsById.value).toEqual({});
    stop();
  });

  it("follows a socket ref: null listens to nothing, a new socket starts empty, stopping the scope removes the listener", async () => {
    const first = new ScriptedSocket();
    const second = new ScriptedSocket();
    const current = shallowRef<ScriptedSocket | null>(null);
    const { events, stop } = follow(() => current.value);
    current.value = first;
    await nextTick();
    expect(first.listeners).toBe(1);
    first.frame(started);
    expect(Object.keys(events.runsById.value)).toEqual([run]);
    // A reset run is applied again when it is replayed.
    events.resetLocalState();
    expect(events.runsById.value).toEqual({});
    first.frame({ ...started, replay: true });
    expect(Object.keys(events.runsById.value)).toEqual([run]);

    current.value = second;
    await nextTick();
    expect(first.listeners).toBe(0);
    expect(second.listeners).toBe(1);
    expect(events.runsById.value).toEqual({});
    first.frame(event(9, { kind: "finished", runId: run, summary: "late" }));
    expect(events.runsById.value).toEqual({});
    stop();
    expect(second.listeners).toBe(0);
  });
});
