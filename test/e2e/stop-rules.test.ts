/**
 * Stop and local aborts against the real `AIChatAgent`: which server turn a
 * stop or an unmount cancels, and what the screen shows once a stopped turn
 * has ended (issues 21 and 22).
 */
import { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ref, watch } from "vue";
import { type AITool, useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { type Chat, expectScreenIsStored, openTracked, whenOpen, whenSettled } from "../support/chat";
import {
  CHAT_AGENT,
  type LogEntry,
  agentHost,
  framesOf,
  post,
  stored,
  textOf,
  uniqueName,
  waitForLog
} from "../support/e2e";
import { mountComposable } from "../support/mount";

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
});

const open = (name: string, options: Parameters<typeof openTracked>[2] = {}) => openTracked(cleanup, name, options);

const requestIdOf = (entry: LogEntry) => entry.requestId as string;
const cancelsOf = async (name: string) => (await framesOf(name, "cf_agent_chat_request_cancel")).map(requestIdOf);

/**
 * Stops `chat` once its reply shows `at` chunks, waits for the turn's end, and
 * records in `short` how the screen differs from the stored transcript, if it does.
 */
async function stopAt(chat: Chat, name: string, at: number, label: string, short: string[]) {
  await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThanOrEqual(expectedText(at).length), {
    timeout: 10_000,
    interval: 5
  });
  await chat.stop();
  await waitForLog(name, (entry) => entry.kind === "turn-finished");
  await whenSettled(chat);
  try {
    await expectScreenIsStored(chat, name, CHAT_AGENT, 3_000);
  } catch {
    const kept = await stored(name);
    short.push(`${label} (stop at ${at}): screen "${textOf(chat.messages.value[1])}", stored "${textOf(kept[1])}"`);
  }
}

/** Runs one round per item, five conversations at a time (each round has its own agent instance). */
async function inBatches<T>(items: readonly T[], round: (item: T, index: number) => Promise<void>) {
  for (let start = 0; start < items.length; start += 5) {
    await Promise.all(items.slice(start, start + 5).map((item, offset) => round(item, start + offset)));
  }
}

/** A small seeded generator, so a failing round can be replayed. */
function seeded(seed: number) {
  let state = seed >>> 0;
  return (below: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
}

describe("stop() cancels the server turn a tab follows, however it arrived (issue 21, 1)", () => {
  it("a server-initiated turn (saveMessages) the tab watches live: one cancel, the server aborts, the screen ends as stored", async () => {
    const name = uniqueName("stopserverturn");
    const { chat } = open(name);
    await chat.ready;
    await whenOpen(chat);
    expect((await post(name, "server-turn", { text: "scheduled", script: { chunks: 200, chunkDelayMs: 25 } })).status).toBe(202);
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(expectedText(5).length));
    expect(chat.isStreaming.value).toBe(true);
    const turn = await waitForLog(name, (entry) => entry.kind === "chat-message");

    await chat.stop();
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === turn.requestId);
    expect(await cancelsOf(name)).toEqual([turn.requestId]);
    await whenSettled(chat);
    await expectScreenIsStored(chat, name);
    expect(textOf((await stored(name))[1])).not.toBe(expectedText(200));
  });

  it("another tab's reply the tab watches live: stop() there cancels it; both tabs end as stored", async () => {
    const name = uniqueName("stopwatched");
    const sender = open(name, { body: { script: { chunks: 200, chunkDelayMs: 25 } } });
    const watcher = open(name);
    await Promise.all([sender.chat.ready, watcher.chat.ready]);
    await whenOpen(watcher.chat);
    void sender.chat.sendMessage({ text: "long" });
    await vi.waitFor(() => expect(textOf(watcher.chat.messages.value[1]).length).toBeGreaterThan(expectedText(5).length));
    expect(watcher.chat.isServerStreaming.value).toBe(true);
    const turn = await waitForLog(name, (entry) => entry.kind === "chat-message");

    await watcher.chat.stop();
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === turn.requestId);
    expect(await cancelsOf(name)).toEqual([turn.requestId]);
    await whenSettled(sender.chat);
    await whenSettled(watcher.chat);
    await expectScreenIsStored(sender.chat, name);
    await expectScreenIsStored(watcher.chat, name);
  });
});

describe("once a stopped turn has ended, the screen is what the server stored (issue 21, 2)", () => {
  it("stop at a random chunk, 50 times: each time the screen equals the stored transcript", async () => {
    const random = seeded(2102);
    const chunks = 60;
    const short: string[] = [];
    const stops = Array.from({ length: 50 }, () => 1 + random(chunks - 10));
    await inBatches(stops, async (at, round) => {
      const name = uniqueName(`stopround${round}`);
      const { chat, unmount } = open(name, { body: { script: { chunks, chunkDelayMs: 12 } } });
      await chat.ready;
      void chat.sendMessage({ text: `round ${round}` });
      await stopAt(chat, name, at, `round ${round}`, short);
      unmount();
    });
    expect(short).toEqual([]);
  }, 240_000);

  it("a tab that resumed the stream, then stopped it at a random chunk, 15 times: each time the screen equals the stored transcript", async () => {
    const random = seeded(2103);
    const chunks = 60;
    const script = { chunks, chunkDelayMs: 15 };
    const short: string[] = [];
    const stops = Array.from({ length: 15 }, () => 10 + random(chunks - 20));
    await inBatches(stops, async (at, round) => {
      const name = uniqueName(`resumestop${round}`);
      const first = open(name, { body: { script } });
      await first.chat.ready;
      void first.chat.sendMessage({ text: `round ${round}` });
      await vi.waitFor(() => expect(textOf(first.chat.messages.value[1]).length).toBeGreaterThan(0));
      first.unmount();
      const { chat, unmount } = open(name, { body: { script } });
      await vi.waitFor(() => expect(chat.status.value).toBe("streaming"), { timeout: 10_000 });
      await stopAt(chat, name, at, `round ${round}`, short);
      unmount();
    });
    expect(short).toEqual([]);
  }, 240_000);
});

/** A client tool with `execute`: the model's call is answered here, and the server continues. */
const locationTools = (): Record<string, AITool> => ({
  getLocation: {
    description: "Where the user is.",
    parameters: { type: "object", properties: {} },
    execute: async () => ({ city: "Lisbon" })
  }
});
/** A tool call answered by the client, then a continuation that takes a while to say anything. */
const slowContinuation = { body: { script: { toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 2_000 } } };

async function attachedContinuation(name: string) {
  const continued = await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
  const requestId = requestIdOf(continued);
  await waitForLog(name, (entry) => entry.type === "cf_agent_stream_resume_ack" && entry.requestId === requestId);
  return requestId;
}

describe("cancelOnClientAbort also cancels a running tool continuation (issue 22, 2)", () => {
  it("unmount during a real tool continuation with cancelOnClientAbort: true cancels it; the agent aborts it", async () => {
    const name = uniqueName("abortcont");
    const { chat, unmount } = open(name, { cancelOnClientAbort: true, tools: locationTools(), ...slowContinuation });
    await chat.ready;
    void chat.sendMessage({ text: "where am I?" });
    const requestId = await attachedContinuation(name);
    expect(chat.isToolContinuation.value).toBe(true);

    unmount();
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === requestId);
    expect(await cancelsOf(name)).toEqual([requestId]);
    expect((await waitForLog(name, (entry) => entry.kind === "turn-finished" && entry.requestId === requestId)).outcome).toBe(
      "aborted"
    );
  });

  it("switching conversation during a real tool continuation with cancelOnClientAbort: true cancels it; the agent aborts it", async () => {
    const name = uniqueName("switchcont");
    const room = ref(name);
    const mounted = mountComposable(() =>
      useAgentChat({
        client: { agent: CHAT_AGENT, host: agentHost(), name: room },
        cancelOnClientAbort: true,
        tools: locationTools(),
        ...slowContinuation
      })
    );
    cleanup.push(mounted.unmount);
    const chat = mounted.result;
    await chat.ready;
    void chat.sendMessage({ text: "where am I?" });
    const requestId = await attachedContinuation(name);

    room.value = uniqueName("elsewhere");
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === requestId);
    expect(await cancelsOf(name)).toEqual([requestId]);
    await whenOpen(chat);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(chat.messages.value).toEqual([]);
  });

  it("with cancelOnClientAbort off (the default), unmount leaves the continuation running to the end", async () => {
    const name = uniqueName("keepcont");
    const { chat, unmount } = open(name, { tools: locationTools(), ...slowContinuation });
    await chat.ready;
    void chat.sendMessage({ text: "where am I?" });
    const requestId = await attachedContinuation(name);
    unmount();
    const finished = await waitForLog(name, (entry) => entry.kind === "turn-finished" && entry.requestId === requestId);
    expect(finished.outcome).toBe("completed");
    expect(await cancelsOf(name)).toEqual([]);
  });
});

describe("a stop lands on the continuation whenever the probe's answer arrives (issue 22, 3)", () => {
  it("stop() between the continuation probe and its answer cancels the continuation, which stays in the message it continues", async () => {
    const name = uniqueName("stoplateanswer");
    const client = new AgentClient({ agent: CHAT_AGENT, host: agentHost(), name });
    cleanup.push(() => client.close());
    // Hold this client's continuation probe until the server runs the
    // continuation, so the answer is an offer of a running turn, and stop
    // while that answer is on its way.
    const send = client.send.bind(client);
    let held: string | null = null;
    let holding = false;
    client.send = (data: Parameters<typeof send>[0]) => {
      if (holding && typeof data === "string" && data.includes('"cf_agent_stream_resume_request"')) {
        holding = false;
        held = data;
        return true;
      }
      return send(data);
    };
    const { chat } = open(name, {
      client: undefined,
      agent: client,
      tools: locationTools(),
      body: { script: { toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 1_500 } }
    });
    await chat.ready;
    let maxAssistants = 0;
    cleanup.push(
      watch(
        chat.messages,
        (messages) => (maxAssistants = Math.max(maxAssistants, messages.filter((m: UIMessage) => m.role === "assistant").length)),
        { flush: "sync" }
      )
    );
    holding = true;
    void chat.sendMessage({ text: "where am I?" });
    await vi.waitFor(() => expect(held).not.toBeNull(), { timeout: 15_000 });
    const continued = await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
    const requestId = requestIdOf(continued);
    send(held!);
    await chat.stop();

    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === requestId);
    expect(await cancelsOf(name)).toEqual([requestId]);
    expect((await waitForLog(name, (entry) => entry.kind === "turn-finished" && entry.requestId === requestId)).outcome).toBe(
      "aborted"
    );
    await whenSettled(chat);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(maxAssistants).toBe(1);
    await expectScreenIsStored(chat, name);
  });
});
