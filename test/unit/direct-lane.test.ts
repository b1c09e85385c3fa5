/**
 * Rule (a chat's own socket hands it its frames directly): on the socket a
 * chat opened itself (`client`), response frames reach the chat from the
 * native socket, not through PartySocket's re-created events and
 * `AgentClient`'s parse; everything else on that socket still sees what it
 * saw before. A real `AgentClient` over the test agent's `WebSocket`.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectScope } from "vue";
import { useAgentChat } from "../../src";
import { createTestAgent } from "../../src/testing";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.unstubAllGlobals();
});

const RESPONSE = "cf_agent_use_chat_response";
const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const typeOf = (event: Event) => {
  const data = (event as MessageEvent).data;
  return typeof data === "string" ? (JSON.parse(data) as { type: string }).type : "";
};

function chatOnOwnSocket(options: Parameters<typeof createTestAgent>[0] = {}) {
  vi.stubGlobal("window", globalThis);
  const agent = createTestAgent({ replies: ["one two three four five"], ...options });
  const scope = effectScope();
  const chat = scope.run(() =>
    useAgentChat({ client: { agent: "chat-agent", host: "agents.test", name: "lane", WebSocket: agent.WebSocket }, throttle: false })
  )!;
  cleanups.push(() => scope.stop(), () => agent.dispose());
  const client = chat.client.value as unknown as EventTarget & { call(method: string, args?: unknown[]): Promise<unknown> };
  // What PartySocket dispatches to the socket's listeners (AgentClient's own included).
  const dispatched: string[] = [];
  const dispatch = client.dispatchEvent.bind(client);
  client.dispatchEvent = (event: Event) => {
    if (event.type === "message") dispatched.push(typeOf(event));
    return dispatch(event);
  };
  return { agent, chat, client, dispatched };
}

describe("Rule (a chat's own socket hands it its frames directly)", () => {
  it("response frames reach the chat without PartySocket passing them on; the reply streams as before", async () => {
    const { agent, chat, dispatched } = chatOnOwnSocket();
    await chat.ready;
    await chat.sendMessage({ text: "hi" });
    await agent.settled();
    expect(text(chat.messages.value[1])).toBe("one two three four five");
    expect(chat.status.value).toBe("ready");
    expect(agent.delivered.filter((frame) => frame.type === RESPONSE).length).toBeGreaterThan(3);
    expect(dispatched.filter((type) => type === RESPONSE)).toEqual([]);
    // The frames AgentClient reads still go to it.
    expect(dispatched).toContain("cf_agent_identity");
  });

  it("a listener added to the chat's client sees every frame, responses included, and the chat still gets each once", async () => {
    const { agent, chat, client } = chatOnOwnSocket();
    await chat.ready;
    const seen: string[] = [];
    const listener = (event: Event) => seen.push(typeOf(event));
    client.addEventListener("message", listener);
    await chat.sendMessage({ text: "hi" });
    await agent.settled();
    const responses = agent.delivered.filter((frame) => frame.type === RESPONSE).length;
    expect(seen.filter((type) => type === RESPONSE)).toHaveLength(responses);
    expect(text(chat.messages.value[1])).toBe("one two three four five");
    // Removed again: the frames go straight to the chat once more.
    client.removeEventListener("message", listener);
    seen.length = 0;
    agent.script("again");
    await chat.sendMessage({ text: "more" });
    await agent.settled();
    expect(text(chat.messages.value[3])).toBe("again");
    expect(seen).toEqual([]);
  });

  it("AgentClient still answers its own frames on that socket: an RPC call resolves", async () => {
    const { agent, chat, client } = chatOnOwnSocket({ methods: { add: (a: number, b: number) => a + b } });
    await chat.ready;
    await agent.settled();
    await expect(client.call("add", [2, 3])).resolves.toBe(5);
  });
});
