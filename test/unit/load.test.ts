import { afterEach, describe, expect, it, vi } from "vitest";
import { getAgentMessages } from "../../src";
import { fetchTranscript, messagesUrl } from "../../src/core/load";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

/** A 200 whose body breaks off, as when the agent goes down while it answers. */
const cutOff = () =>
  new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('[{"id":"u1",'));
        controller.error(new TypeError("Failed to fetch"));
      }
    }),
    { status: 200 }
  );

/** What `useAgentChat` hands `fetchTranscript` with `persist`. */
const unreachable = (why: string): never => {
  throw new Error(`the agent did not answer (${why})`);
};

describe("fetchTranscript: a body cut off on its way", () => {
  it("with persist (`unreachable`) it is a read that did not reach the agent, not an empty transcript (CI: persist e2e, a tab lost its history)", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => cutOff()));
    vi.spyOn(console, "warn").mockImplementation(() => {});
    await expect(fetchTranscript("https://h.dev/agents/a/s/get-messages", {}, "a/s", unreachable)).rejects.toThrow("the agent did not answer (Failed to fetch)");
  });

  it("without it the chat starts empty with a warning, as before", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => cutOff()));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(await fetchTranscript("https://h.dev/agents/a/s/get-messages", {}, "a/s")).toEqual([]);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("Could not read the transcript of a/s: Failed to fetch"));
  });
});

describe("getAgentMessages({ url }) (issue 29, 8)", () => {
  it("fetches a URL whose path ends in /get-messages as given, and adds /get-messages to an agent's URL", () => {
    expect(messagesUrl("https://h.dev/agents/chat-agent/s1/get-messages")).toBe("https://h.dev/agents/chat-agent/s1/get-messages");
    expect(messagesUrl("https://h.dev/custom/path/get-messages?token=t")).toBe("https://h.dev/custom/path/get-messages?token=t");
    expect(messagesUrl("https://h.dev/agents/chat-agent/s1")).toBe("https://h.dev/agents/chat-agent/s1/get-messages");
    expect(messagesUrl("https://h.dev/agents/chat-agent/s1/")).toBe("https://h.dev/agents/chat-agent/s1/get-messages");
    expect(messagesUrl("https://h.dev/agents/chat-agent/s1?token=t#x")).toBe("https://h.dev/agents/chat-agent/s1/get-messages?token=t#x");
    expect(messagesUrl("wss://h.dev/agents/chat-agent/s1")).toBe("https://h.dev/agents/chat-agent/s1/get-messages");
    expect(messagesUrl("ws://127.0.0.1:8787/agents/chat-agent/s1")).toBe("http://127.0.0.1:8787/agents/chat-agent/s1/get-messages");
    expect(messagesUrl("/agents/chat-agent/s1")).toBe("/agents/chat-agent/s1/get-messages");
  });

  it("reads the agent's URL through /get-messages, with the request options", async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify([{ id: "u1", role: "user", parts: [] }])));
    vi.stubGlobal("fetch", fetch);
    const messages = await getAgentMessages({ url: "https://h.dev/agents/chat-agent/s1", headers: { authorization: "x" } });
    expect(messages.map((message) => message.id)).toEqual(["u1"]);
    expect(fetch).toHaveBeenCalledWith("https://h.dev/agents/chat-agent/s1/get-messages", { credentials: undefined, headers: { authorization: "x" } });
  });

  it("an empty url reads nothing and warns, without a request", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(await getAgentMessages({ url: " " })).toEqual([]);
    expect(fetch).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("`url` must be the agent's URL or its `/get-messages` URL"));
  });
});
