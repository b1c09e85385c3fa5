import { AgentClient } from "agents/client";
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { expectedText } from "../fixtures/worker/src/script";
import { openChat, whenOpen, whenSettled } from "../support/chat";
import { getAgentMessages } from "../../src";
import {
  agentHost,
  agentOrigin,
  agentUrl,
  onStockAgent,
  post,
  readLog,
  runAgent,
  shape,
  stored,
  textOf,
  uniqueName,
  waitForLog
} from "../support/e2e";

const reads = async (name: string) => (await readLog(name)).filter((entry) => entry.kind === "get-messages").length;

describe("one conversation, two clients", () => {
  it("B follows A's stream live with the same ids, then A follows B", async () => {
    const name = uniqueName("two");
    const a = openChat(name, { body: { script: { chunks: 30, chunkDelayMs: 25 } } });
    const b = openChat(name);
    await Promise.all([whenOpen(a.chat), whenOpen(b.chat)]);
    await Promise.all([a.chat.ready, b.chat.ready]);

    const sent = a.chat.sendMessage({ text: "from A" });
    // While A's reply streams, B renders it too (an observed turn).
    await vi.waitFor(() => {
      expect(b.chat.isServerStreaming.value).toBe(true);
      expect(textOf(b.chat.messages.value[1]).length).toBeGreaterThan(0);
    });
    expect(b.chat.messages.value.map((m) => m.id)).toEqual(a.chat.messages.value.map((m) => m.id));
    await sent;
    await whenSettled(b.chat);
    expect(shape(b.chat.messages.value)).toEqual(shape(a.chat.messages.value));
    expect(textOf(b.chat.messages.value[1])).toBe(expectedText(30));

    await b.chat.sendMessage({ text: "from B" });
    await vi.waitFor(() => expect(shape(a.chat.messages.value)).toEqual(shape(b.chat.messages.value)));
    await whenSettled(a.chat);
    expect(a.chat.messages.value.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(shape(await stored(name))).toEqual(shape(a.chat.messages.value));
    a.unmount();
    b.unmount();
  });
});

describe("transcript reads", () => {
  // HTTP reads: an ordered agent pushes the transcript on the socket instead.
  onStockAgent();
  it("a reload shows the stored transcript with exactly one read per mount", async () => {
    const name = uniqueName("reads");
    const first = openChat(name);
    await first.chat.ready;
    await first.chat.sendMessage({ text: "persist me" });
    first.unmount();
    expect(await reads(name)).toBe(1);

    const second = openChat(name);
    await second.chat;
    expect(second.chat.messages.value.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(await reads(name)).toBe(2);
    second.unmount();
  });

  it("initialMessages: [] with resyncOnReconnect: false never reads, even across a reconnect", async () => {
    const name = uniqueName("noreads");
    const client = new AgentClient({ agent: runAgent(), host: agentHost(), name });
    const { chat, unmount } = openChat(name, {
      client: undefined,
      agent: client,
      initialMessages: [],
      resyncOnReconnect: false
    });
    await whenOpen(chat);
    await chat.sendMessage({ text: "one" });
    client.reconnect();
    await vi.waitFor(async () =>
      expect((await readLog(name)).filter((entry) => entry.kind === "connect")).toHaveLength(2)
    );
    await whenOpen(chat);
    await chat.sendMessage({ text: "two" });
    expect(await reads(name)).toBe(0);
    unmount();
    client.close();
  });

  it("a reconnect re-reads the transcript and hands (on-screen, stored) to mergeMessages", async () => {
    const name = uniqueName("merge");
    const client = new AgentClient({ agent: runAgent(), host: agentHost(), name });
    const calls: Array<{ onScreen: string[]; stored: string[] }> = [];
    const marker: UIMessage = { id: "merged-marker", role: "assistant", parts: [{ type: "text", text: "merged" }] };
    const { chat, unmount } = openChat(name, {
      client: undefined,
      agent: client,
      mergeMessages: (onScreen, storedMessages) => {
        calls.push({ onScreen: onScreen.map((m) => m.id), stored: storedMessages.map((m) => m.id) });
        return [...storedMessages, marker];
      }
    });
    await chat.ready;
    await chat.sendMessage({ text: "before the drop" });
    const ids = chat.messages.value.map((m) => m.id);
    client.reconnect();
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]).toEqual({ onScreen: ids, stored: ids });
    await vi.waitFor(() => expect(chat.messages.value.map((m) => m.id)).toEqual([...ids, "merged-marker"]));
    unmount();
    client.close();
  });

  it("a 500 from /get-messages warns with the status and leaves a working, empty chat", async () => {
    const warn = vi.spyOn(console, "warn");
    const name = uniqueName("broken500");
    const { chat, unmount } = openChat(name);
    await chat.ready;
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("HTTP 500"));
    expect(chat.messages.value).toEqual([]);
    await chat.sendMessage({ text: "still works" });
    expect(textOf(chat.messages.value[1])).toBe(expectedText(5));
    warn.mockRestore();
    unmount();
  });

  it("invalid JSON from /get-messages warns and leaves a working, empty chat", async () => {
    const warn = vi.spyOn(console, "warn");
    const name = uniqueName("brokenjson");
    const { chat, unmount } = openChat(name);
    await chat.ready;
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("not valid JSON"));
    expect(chat.isLoading.value).toBe(false);
    await chat.sendMessage({ text: "still works" });
    expect(chat.messages.value.map((m) => m.role)).toEqual(["user", "assistant"]);
    warn.mockRestore();
    unmount();
  });

  it("a message sent before the transcript arrives is kept and lands after it", async () => {
    const name = uniqueName("early");
    const seed = openChat(name);
    await seed.chat.sendMessage({ text: "old question" });
    seed.unmount();

    const { chat, unmount } = openChat(name);
    const sent = chat.sendMessage({ text: "typed at once" });
    await sent;
    await whenSettled(chat);
    expect(chat.messages.value.map((m) => textOf(m))).toEqual([
      "old question",
      expectedText(5),
      "typed at once",
      expectedText(5)
    ]);
    expect(shape(await stored(name))).toEqual(shape(chat.messages.value));
    unmount();
  });
});

describe("getAgentMessages against the agent (issue 29, 8)", () => {
  it("reads the same stored transcript from the address, the agent's URL (http, trailing slash, ws) and the full /get-messages URL", async () => {
    const name = uniqueName("getmsgs");
    const seed = openChat(name);
    await seed.chat.ready;
    await seed.chat.sendMessage({ text: "keep me" });
    await whenSettled(seed.chat);
    seed.unmount();
    const expected = shape(await stored(name));
    expect(expected.map((message) => message.role)).toEqual(["user", "assistant"]);
    const url = agentUrl(name);
    const forms = [
      { host: agentOrigin(), agent: runAgent(), name },
      { url },
      { url: `${url}/` },
      { url: url.replace(/^http/, "ws") },
      { url: `${url}/get-messages` }
    ];
    const read: Record<string, unknown> = {};
    for (const form of forms) read[JSON.stringify(form)] = shape(await getAgentMessages(form));
    expect(read).toEqual(Object.fromEntries(forms.map((form) => [JSON.stringify(form), expected])));
  });
});

describe("onFrame", () => {
  it("sees a custom frame whole; a consumed frame goes nowhere else; chat frames still work", async () => {
    const name = uniqueName("frames");
    const frames: unknown[] = [];
    const { chat, unmount } = openChat(name, {
      initialMessages: [],
      onFrame: (frame) => {
        frames.push(frame);
        if (typeof frame === "object" && frame !== null && (frame as { type?: string }).type === "my_app_event") {
          return true;
        }
      }
    });
    await whenOpen(chat);
    const custom = { type: "my_app_event", payload: { nested: [1, 2, 3] }, extra: "kept" };
    await post(name, "broadcast", custom);
    await vi.waitFor(() => expect(frames).toContainEqual(custom));
    await chat.sendMessage({ text: "frames still flow" });
    expect(textOf(chat.messages.value[1])).toBe(expectedText(5));
    expect(frames.some((frame) => (frame as { type?: string }).type === "cf_agent_use_chat_response")).toBe(true);
    unmount();
  });
});

describe("local edits reach the server", () => {
  it("setMessages with an updater syncs the result; the next mount sees it", async () => {
    const name = uniqueName("setmsgs");
    const first = openChat(name);
    await first.chat.ready;
    await first.chat.sendMessage({ text: "one" });
    const note: UIMessage = { id: "note-1", role: "assistant", parts: [{ type: "text", text: "a note" }] };
    first.chat.setMessages((current) => [
      { ...current[0]!, parts: [{ type: "text", text: "one (edited)" }] },
      ...current.slice(1),
      note
    ]);
    const expected = ["one (edited)", expectedText(5), "a note"];
    expect(first.chat.messages.value.map((m) => textOf(m))).toEqual(expected);
    await vi.waitFor(async () => expect((await stored(name)).map((m) => textOf(m))).toEqual(expected));
    first.unmount();

    const second = openChat(name);
    await second.chat;
    expect(second.chat.messages.value.map((m) => textOf(m))).toEqual(expected);
    second.unmount();
  });

  it("clearHistory clears here and on the server, with one clear frame", async () => {
    const name = uniqueName("clear");
    const first = openChat(name);
    await first.chat.ready;
    await first.chat.sendMessage({ text: "to be cleared" });
    first.chat.clearHistory();
    expect(first.chat.messages.value).toEqual([]);
    await vi.waitFor(async () => expect(await stored(name)).toEqual([]));
    expect((await readLog(name)).filter((entry) => entry.type === "cf_agent_chat_clear")).toHaveLength(1);
    first.unmount();
    const second = openChat(name);
    await second.chat;
    expect(second.chat.messages.value).toEqual([]);
    second.unmount();
  });
});

describe("switching conversations without remounting", () => {
  it("moving from A (streaming) to B shows only B; A's turn still finishes on the server", async () => {
    const { ref } = await import("vue");
    const nameA = uniqueName("convA");
    const nameB = uniqueName("convB");
    const seedB = openChat(nameB);
    await seedB.chat.sendMessage({ text: "hello B" });
    seedB.unmount();

    const current = ref(nameA);
    const { chat, unmount } = openChat(nameA, {
      client: { agent: runAgent(), host: agentHost(), name: current },
      body: { script: { chunks: 60, chunkDelayMs: 20 } }
    });
    await chat.ready;
    void chat.sendMessage({ text: "long answer in A" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(6));
    current.value = nameB;
    await vi.waitFor(() => expect(chat.messages.value.map((m) => textOf(m))).toEqual(["hello B", expectedText(5)]));
    await whenSettled(chat);
    // Nothing of A leaked into B, and A's transcript was never read for B.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(chat.messages.value.map((m) => textOf(m))).toEqual(["hello B", expectedText(5)]);
    expect((await readLog(nameA)).filter((entry) => entry.type === "cf_agent_chat_request_cancel")).toHaveLength(0);

    await waitForLog(nameA, (entry) => entry.kind === "turn-finished", { timeout: 20_000 });
    current.value = nameA;
    await vi.waitFor(() =>
      expect(chat.messages.value.map((m) => textOf(m))).toEqual(["long answer in A", expectedText(60)])
    );
    unmount();
  });
});
