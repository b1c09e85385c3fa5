import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { expectedText } from "../fixtures/worker/src/script";
import { openChat, whenOpen, whenSettled } from "../support/chat";
import { CHAT_AGENT, CHAT_AGENT_PATH, post, readLog, shape, stored, textOf, uniqueName } from "../support/e2e";
/** The run is against the ordered server half (exact sync), whose connect-time transcript is the server's word. */
const ORDERED = CHAT_AGENT === "OrderedChatAgent";


describe("turns this tab did not start", () => {
  it("a server-initiated turn (saveMessages) renders live as an observed turn", async () => {
    const name = uniqueName("serverturn");
    const { chat, unmount } = openChat(name);
    await chat.ready;
    await whenOpen(chat);
    const response = await post(name, "server-turn", { text: "scheduled check-in", script: { chunks: 25, chunkDelayMs: 30 } });
    expect(response.status).toBe(202);
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(true));
    expect(chat.isStreaming.value).toBe(true);
    expect(chat.status.value).toBe("ready");
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(expectedText(25)), { timeout: 15_000 });
    await whenSettled(chat);
    expect(shape(chat.messages.value)).toEqual(shape(await stored(name)));
    unmount();
  });

  it("a tab that opens mid-way through another tab's turn catches up and converges", async () => {
    const name = uniqueName("latecomer");
    const a = openChat(name, { body: { script: { chunks: 40, chunkDelayMs: 30 } } });
    await a.chat.ready;
    void a.chat.sendMessage({ text: "long" });
    await vi.waitFor(() => expect(textOf(a.chat.messages.value[1]).length).toBeGreaterThan(20));
    const b = openChat(name);
    await vi.waitFor(() => expect(textOf(b.chat.messages.value[1])).toBe(expectedText(40)), { timeout: 15_000 });
    await whenSettled(a.chat);
    await whenSettled(b.chat);
    expect(shape(b.chat.messages.value)).toEqual(shape(a.chat.messages.value));
    expect(b.chat.messages.value[1]!.parts.filter((part) => part.type === "text")).toHaveLength(1);
    a.unmount();
    b.unmount();
  });
});

describe("custom transcript loaders", () => {
  it("getInitialMessages replaces the /get-messages read and gets { agent, name, url }", async () => {
    const name = uniqueName("loader");
    const calls: Array<{ agent: string; name: string; url?: string }> = [];
    const seed: UIMessage[] = [{ id: "seeded", role: "user", parts: [{ type: "text", text: "from my loader" }] }];
    const { chat, unmount } = openChat(name, {
      getInitialMessages: async (options) => {
        calls.push(options);
        return seed;
      }
    });
    await chat;
    // An ordered server's connect-time transcript (empty here) is the server's word, whenever the loader answers.
    await expect.poll(() => chat.messages.value.map(textOf)).toEqual(ORDERED ? [] : ["from my loader"]);
    // Once this page saw the ordered agent push its transcript, a chat waits for that instead of reading.
    expect(calls).toHaveLength(ORDERED ? Math.min(calls.length, 1) : 1);
    const url = new RegExp(`/agents/${CHAT_AGENT_PATH}/${name}$`);
    expect(calls.every((call) => call.name === name && url.test(call.url ?? ""))).toBe(true);
    expect((await readLog(name)).filter((entry) => entry.kind === "get-messages")).toHaveLength(0);
    unmount();
  });

  it("getInitialMessages: null reads nothing and starts from `messages`", async () => {
    const name = uniqueName("noloader");
    const { chat, unmount } = openChat(name, {
      getInitialMessages: null,
      messages: [{ id: "given", role: "user", parts: [{ type: "text", text: "given" }] }]
    });
    await whenOpen(chat);
    expect(chat.isLoading.value).toBe(false);
    // An ordered server pushes its stored transcript (empty here), and that is the server's word.
    await expect.poll(() => chat.messages.value.map(textOf)).toEqual(ORDERED ? [] : ["given"]);
    await chat.sendMessage({ text: "go" });
    expect((await readLog(name)).filter((entry) => entry.kind === "get-messages")).toHaveLength(0);
    unmount();
  });
});
