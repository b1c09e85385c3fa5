import { describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { CHAT_AGENT, agentHost, post, readLog, stored, textOf, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";

function openChat(name: string, options: Partial<Parameters<typeof useAgentChat>[0]> = {}) {
  return mountComposable(() =>
    useAgentChat({ client: { agent: CHAT_AGENT, host: agentHost(), name }, ...options })
  );
}

describe("useAgentChat against a real AIChatAgent", () => {
  it("streams a reply and ends ready with exactly [user, assistant]", async () => {
    const name = uniqueName("stream");
    const { result: chat, unmount } = openChat(name, { body: { script: { chunks: 12, chunkDelayMs: 10 } } });
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"));
    const sent = chat.chat.sendMessage({ text: "hello" });
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    await sent;
    expect(chat.status.value).toBe("ready");
    expect(chat.chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(chat.chat.messages[1])).toBe(expectedText(12));
    expect((await stored(name)).map((m) => m.id)).toEqual(chat.chat.messages.map((m) => m.id));
    unmount();
  });

  it("a second component with the same name loads that transcript", async () => {
    const name = uniqueName("reload");
    const first = openChat(name);
    await first.result.chat.sendMessage({ text: "remember me" });
    const ids = first.result.chat.messages.map((m) => m.id);
    expect(ids).toHaveLength(2);

    const second = openChat(name);
    await second.result;
    expect(second.result.chat.messages.map((m) => m.id)).toEqual(ids);
    expect(textOf(second.result.chat.messages[0])).toBe("remember me");
    first.unmount();
    second.unmount();
  });

  it("unmounting closes the socket: the server sees the connection close", async () => {
    const name = uniqueName("unmount");
    const { result: chat, unmount } = openChat(name, { initialMessages: [] });
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"));
    const connected = await waitForLog(name, (entry) => entry.kind === "connect");
    unmount();
    await waitForLog(name, (entry) => entry.kind === "close" && entry.connectionId === connected.connectionId);
  });

  it("stop() mid-stream fires the server's abort and the text stops growing", async () => {
    const name = uniqueName("stop");
    const { result: chat, unmount } = openChat(name, { body: { script: { chunks: 200, chunkDelayMs: 20 } } });
    const sent = chat.chat.sendMessage({ text: "long one" });
    await vi.waitFor(() => expect(textOf(chat.chat.messages[1]).length).toBeGreaterThan(12));
    await chat.stop();
    expect(chat.status.value).toBe("ready");
    await sent;
    const request = await waitForLog(name, (entry) => entry.kind === "frame" && entry.type === "cf_agent_use_chat_request");
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === request.requestId);
    const cancels = (await readLog(name)).filter((entry) => entry.type === "cf_agent_chat_request_cancel");
    expect(cancels).toHaveLength(1);
    // Once the stopped turn has ended, the screen holds what the server stored (issue 21, 2).
    await waitForLog(name, (entry) => entry.kind === "turn-finished");
    await vi.waitFor(async () => expect(textOf(chat.chat.messages[1])).toBe(textOf((await stored(name))[1])));
    const frozen = textOf(chat.chat.messages[1]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(textOf(chat.chat.messages[1])).toBe(frozen);
    expect(frozen.length).toBeLessThan(expectedText(200).length);
    unmount();
  });

  it("a malformed frame from the agent breaks nothing; the next turn still works", async () => {
    const name = uniqueName("malformed");
    const warn = vi.spyOn(console, "warn");
    const { result: chat, unmount } = openChat(name, { initialMessages: [] });
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"));
    await post(name, "broadcast-raw", "}{ definitely not json");
    await vi.waitFor(() => expect(warn).toHaveBeenCalledWith(expect.stringContaining("not JSON")));
    await chat.chat.sendMessage({ text: "still there?" });
    expect(chat.status.value).toBe("ready");
    expect(textOf(chat.chat.messages[1])).toBe(expectedText(5));
    warn.mockRestore();
    unmount();
  });
});
