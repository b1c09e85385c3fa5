import { afterEach, describe, expect, it, vi } from "vitest";
import { getAgentMessages } from "../../src";
import { messagesUrl } from "../../src/core/load";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
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
