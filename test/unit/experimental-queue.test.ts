/**
 * The AI SDK's message queue (`experimental_queue`) through `useAgentChat`: the queue, taking a message off it,
 * and sending one now (issue 47, 6). Against the test agent (the simulated `AIChatAgent`), with manual pace.
 */
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { effectScope } from "vue";
import { useAgentChat } from "../../src";
import { createTestAgent } from "../../src/testing";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const textOf = (message: UIMessage | undefined) => (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const texts = (messages: readonly UIMessage[]) => messages.map((message) => `${message.role}: ${textOf(message)}`);

function openQueuedChat(replies: string[], experimental_queue = true) {
  const agent = createTestAgent({ pace: "manual", replies });
  const scope = effectScope();
  const chat = scope.run(() => useAgentChat({ agent: agent.socket, experimental_queue }))!;
  cleanups.push(() => scope.stop(), () => agent.dispose());
  return { agent, chat };
}

describe("useAgentChat with experimental_queue", () => {
  it("queues what is sent while a reply streams, sends it once the reply ends, and takes a removed one off", async () => {
    const { agent, chat } = openQueuedChat(["first reply here", "second reply", "third reply"]);
    await agent.settled();
    expect(chat.experimental_queuedMessages.value).toEqual([]);

    void chat.sendMessage({ text: "one" });
    await agent.advance(3); // start, text-start, "first"
    expect(chat.status.value).toBe("streaming");
    const second = chat.sendMessage({ text: "two" });
    const third = chat.sendMessage({ text: "three" });
    await agent.settled();
    expect(chat.experimental_queuedMessages.value.map(textOf)).toEqual(["two", "three"]);
    expect(texts(chat.messages.value)).toEqual(["user: one", "assistant: first"]);
    expect(agent.received.filter((frame) => frame.type === "cf_agent_use_chat_request")).toHaveLength(1);

    chat.experimental_removeQueuedMessage(chat.experimental_queuedMessages.value[1]!.id);
    expect(chat.experimental_queuedMessages.value.map(textOf)).toEqual(["two"]);
    await third;

    await agent.advance("turn"); // the first reply ends; "two" goes out
    await agent.advance("turn");
    await second;
    await agent.settled();
    expect(chat.experimental_queuedMessages.value).toEqual([]);
    expect(texts(chat.messages.value)).toEqual(["user: one", "assistant: first reply here", "user: two", "assistant: second reply"]);
    expect(agent.transcript.map((message) => textOf(message))).toEqual(["one", "first reply here", "two", "second reply"]);
    expect(agent.received.filter((frame) => frame.type === "cf_agent_use_chat_request")).toHaveLength(2);
  });

  it("experimental_sendQueuedMessageNow stops the reply (the server turn is cancelled) and sends that message next", async () => {
    const { agent, chat } = openQueuedChat(["a long reply that is cut short", "the reply to three", "the reply to two"]);
    await agent.settled();
    void chat.sendMessage({ text: "one" });
    await agent.advance(3);
    void chat.sendMessage({ text: "two" });
    void chat.sendMessage({ text: "three" });
    await agent.settled();
    const [two, three] = chat.experimental_queuedMessages.value;

    const sent = chat.experimental_sendQueuedMessageNow(three!.id);
    await agent.settled();
    expect(agent.received.filter((frame) => frame.type === "cf_agent_chat_request_cancel")).toHaveLength(1);
    await agent.advance("turn"); // "three" streams
    await agent.advance("turn"); // then "two", the rest of the queue
    await sent;
    await agent.settled();
    expect(chat.experimental_queuedMessages.value).toEqual([]);
    expect(texts(chat.messages.value)).toEqual(["user: one", "assistant: a", "user: three", "assistant: the reply to three", "user: two", "assistant: the reply to two"]);
    expect(chat.messages.value.map((message) => message.id)).toEqual(agent.transcript.map((message) => message.id));
    expect([two!.id, three!.id].every((id) => agent.transcript.some((message) => message.id === id))).toBe(true);
    // An id that is not queued changes nothing.
    await chat.experimental_sendQueuedMessageNow("not-queued");
    expect(agent.received.filter((frame) => frame.type === "cf_agent_chat_request_cancel")).toHaveLength(1);
  });

  it("without the option nothing is queued by the AI SDK, and the accessors are inert", async () => {
    const { agent, chat } = openQueuedChat(["reply"], false);
    await agent.settled();
    void chat.sendMessage({ text: "one" });
    await agent.advance("turn");
    expect(chat.experimental_queuedMessages.value).toEqual([]);
    expect(() => chat.experimental_removeQueuedMessage("nothing")).not.toThrow();
    await expect(chat.experimental_sendQueuedMessageNow("nothing")).resolves.toBeUndefined();
  });
});
