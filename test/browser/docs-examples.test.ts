/**
 * The documented examples, run as written, with their default options: the
 * README's component and the first chat of Getting started (the spec's usage
 * example) are these files, word for word (test/unit/docs.test.ts compares
 * them with the pages). Each opens its own socket through `client`, which
 * reaches an in-page test agent through the global WebSocket, the way the
 * Testing guide stubs it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Component, createApp } from "vue";
import { createTestAgent } from "../../src/testing";
import FirstChat from "../fixtures/docs/FirstChat.vue";
import ReadmeChat from "../fixtures/docs/ReadmeChat.vue";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).toReversed()) cleanup();
  vi.unstubAllGlobals();
});

/** Mounts `component` in the page; the returned host is its DOM. */
function mount(component: Component): HTMLElement {
  const host = document.body.appendChild(document.createElement("div"));
  const app = createApp(component);
  app.mount(host);
  cleanups.push(() => {
    app.unmount();
    host.remove();
  });
  return host;
}

const button = (host: HTMLElement, label: string) => {
  const found = [...host.querySelectorAll("button")].find((candidate) => candidate.textContent?.trim() === label);
  if (!found) throw new Error(`no "${label}" button`);
  return found;
};

describe("the documented examples, as written", () => {
  it("the README's component says hello, shows the reply as it streams, and Stop cancels a reply on the agent", async () => {
    const agent = createTestAgent({ pace: "manual", replies: ["Hello! How can I help?", "A long answer the user stops"] });
    cleanups.push(() => agent.dispose());
    vi.stubGlobal("WebSocket", agent.WebSocket);
    const host = mount(ReadmeChat);
    const lines = () => [...host.querySelectorAll("p")].map((line) => line.textContent?.replace(/\s+/g, " ").trim());
    await agent.settled();
    expect(agent.connected).toBe(true);

    button(host, "Say hello").click();
    await agent.advance(3); // start, text-start, "Hello!"
    await vi.waitFor(() => expect(lines()).toEqual(["user: Hello!", "assistant: Hello!"]));
    await agent.advance("turn");
    await vi.waitFor(() => expect(lines()).toEqual(["user: Hello!", "assistant: Hello! How can I help?"]));

    button(host, "Say hello").click();
    await agent.advance(3); // start, text-start, "A"
    await vi.waitFor(() => expect(lines().at(-1)).toBe("assistant: A"));
    button(host, "Stop").click();
    await agent.settled();
    expect(agent.received.some((frame) => frame.type === "cf_agent_chat_request_cancel")).toBe(true);
    expect(agent.streaming).toBe(false);
    await vi.waitFor(() => expect(lines()).toHaveLength(4));
    expect(agent.transcript.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("Getting started's first chat (the spec's usage example) sends, streams, and clears on the agent too", async () => {
    const agent = createTestAgent({ replies: ["Hi there, from the agent"] });
    cleanups.push(() => agent.dispose());
    vi.stubGlobal("WebSocket", agent.WebSocket);
    const host = mount(FirstChat);
    await agent.settled();
    // The socket and the transcript read both reached the test agent, at agent.example.com.
    expect(agent.connected).toBe(true);
    expect(agent.reads).toBe(1);

    button(host, "Send").click();
    await agent.settled();
    await vi.waitFor(() =>
      expect([...host.querySelectorAll("div")].map((line) => line.textContent?.replace(/\s+/g, " ").trim())).toEqual([
        "user:hi",
        "assistant:Hi there, from the agent"
      ])
    );
    expect(agent.transcript).toHaveLength(2);

    button(host, "Clear").click();
    await agent.settled();
    await vi.waitFor(() => expect(host.querySelectorAll("div")).toHaveLength(0));
    expect(agent.transcript).toEqual([]);
  });
});
