import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { openChat, whenSettled } from "../support/chat";
import { type LogEntry, onStockAgent, readLog, stored, textOf, uniqueName, waitForLog } from "../support/e2e";

const requests = async (name: string) =>
  (await readLog(name)).filter((entry) => entry.kind === "frame" && entry.type === "cf_agent_use_chat_request");

/** Deterministic ids, so two runs of the same turns can be compared id for id. */
function idsFrom(prefix: string) {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

/** What must match between two transcripts of the same turns (assistant ids are minted by the server). */
const content = (messages: readonly UIMessage[]) =>
  messages.map((message) => ({
    id: message.role === "user" ? message.id : "assistant",
    role: message.role,
    text: textOf(message)
  }));

async function converse(name: string, sendOnlyNewMessages: boolean, turns: number) {
  const { chat, unmount } = openChat(name, {
    sendOnlyNewMessages,
    generateId: idsFrom("m"),
    body: { script: { echo: true } }
  });
  await chat.ready;
  for (let turn = 1; turn <= turns; turn++) await chat.sendMessage({ text: `question ${turn}` });
  await whenSettled(chat);
  return { chat, unmount };
}

/** Three questions, an edit of the second, then a regenerate. */
async function editThenRegenerate(name: string, sendOnlyNewMessages: boolean) {
  const { chat, unmount } = openChat(name, {
    sendOnlyNewMessages,
    generateId: idsFrom("e"),
    body: { script: { echo: true } }
  });
  await chat.ready;
  await chat.sendMessage({ text: "first" });
  await chat.sendMessage({ text: "second" });
  await chat.sendMessage({ text: "third" });
  // Edit the second question: the server drops what followed it.
  const second = chat.messages.value[2]!;
  await chat.sendMessage({ text: "second, edited", messageId: second.id });
  await whenSettled(chat);
  await chat.regenerate();
  await whenSettled(chat);
  return { chat, unmount };
}

/** A question whose reply asks for approval, the approval (auto-continued), then a follow-up question. */
async function approveThenAsk(name: string, sendOnlyNewMessages: boolean) {
  const { chat, unmount } = openChat(name, {
    sendOnlyNewMessages,
    generateId: idsFrom("ap"),
    body: { script: { toolCalls: [{ toolName: "dangerousAction", input: { target: "file.txt" } }] } }
  });
  await chat.ready;
  await chat.sendMessage({ text: "delete it" });
  await vi.waitFor(() => {
    const part = chat.messages.value[1]?.parts.find((p) => p.type === "tool-dangerousAction") as
      | { state?: string; approval?: { id: string } }
      | undefined;
    expect(part?.state).toBe("approval-requested");
  });
  const part = chat.messages.value[1]!.parts.find((p) => p.type === "tool-dangerousAction") as {
    approval: { id: string };
  };
  await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
  await waitForLog(name, (entry) => entry.kind === "tool-executed");
  await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toContain("after tools"));
  await whenSettled(chat);
  await chat.sendMessage({ text: "and now?" });
  await whenSettled(chat);
  return { chat, unmount };
}

/** A question whose reply asks for approval, the approval with auto-continue off, then a bare sendMessage(). */
async function approveThenBareSend(name: string, sendOnlyNewMessages: boolean) {
  const { chat, unmount } = openChat(name, {
    sendOnlyNewMessages,
    autoContinueAfterToolResult: false,
    generateId: idsFrom("bare"),
    body: { script: { toolCalls: [{ toolName: "dangerousAction", input: { target: "x" } }] } }
  });
  await chat.ready;
  await chat.sendMessage({ text: "delete x" });
  await vi.waitFor(() => {
    const part = chat.messages.value[1]?.parts.find((p) => p.type === "tool-dangerousAction") as
      | { state?: string }
      | undefined;
    expect(part?.state).toBe("approval-requested");
  });
  const part = chat.messages.value[1]!.parts.find((p) => p.type === "tool-dangerousAction") as {
    approval: { id: string };
  };
  await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
  await chat.sendMessage();
  await whenSettled(chat);
  await waitForLog(name, (entry) => entry.kind === "tool-executed");
  return { chat, unmount };
}

/** The body the server's onChatMessage saw last for this conversation. */
const lastChatMessage = async (name: string) =>
  (await waitForLog(name, (entry) => entry.kind === "chat-message")) as LogEntry & { body: Record<string, unknown> };

describe("sendOnlyNewMessages", () => {
  it("20 turns: each request after the first carries one message and afterMessageId; the server transcript matches a full-list client's", async () => {
    const partial = uniqueName("partial");
    const full = uniqueName("full");
    const a = await converse(partial, true, 20);
    const b = await converse(full, false, 20);

    const partialRequests = await requests(partial);
    expect(partialRequests).toHaveLength(20);
    expect(partialRequests[0]!.afterMessageId).toBeUndefined();
    expect(partialRequests[0]!.messageCount).toBe(1);
    for (const [index, request] of partialRequests.slice(1).entries()) {
      expect(request.messageCount, `request ${index + 2}`).toBe(1);
      expect(typeof request.afterMessageId, `request ${index + 2}`).toBe("string");
    }
    const fullRequests = await requests(full);
    expect(fullRequests.map((request) => request.messageCount)).toEqual(
      Array.from({ length: 20 }, (_, index) => 2 * index + 1)
    );

    const storedPartial = await stored(partial);
    expect(storedPartial).toHaveLength(40);
    expect(content(storedPartial)).toEqual(content(await stored(full)));
    expect(storedPartial.map((m) => m.id)).toEqual(a.chat.messages.value.map((m) => m.id));
    a.unmount();
    b.unmount();
  }, 120_000);

  it("an edit, a regenerate and an approval continuation leave the same transcript as a full-list client", async () => {
    const partialName = uniqueName("editp");
    const fullName = uniqueName("editf");
    const partial = await editThenRegenerate(partialName, true);
    const full = await editThenRegenerate(fullName, false);
    const expected = ["first", "echo: first", "second, edited", "echo: second, edited"];
    expect((await stored(partialName)).map(textOf)).toEqual(expected);
    expect(content(await stored(partialName))).toEqual(content(await stored(fullName)));
    const partialRequests = await requests(partialName);
    // The edit carried the edited message (rewritten in place) after the first answer.
    const edit = partialRequests[3]!;
    expect(edit.messageCount).toBe(1);
    expect(edit.messageIds).toEqual([partial.chat.messages.value[2]!.id]);
    expect(typeof edit.afterMessageId).toBe("string");
    // A regenerate carries the full list and no afterMessageId.
    const regenerate = partialRequests[4]!;
    expect(regenerate.trigger).toBe("regenerate-message");
    expect(regenerate.afterMessageId).toBeUndefined();
    expect(regenerate.messageCount).toBe(3);
    partial.unmount();
    full.unmount();
  }, 60_000);

  it("a continuation after an approval, then a new question, matches a full-list client", async () => {
    const partialName = uniqueName("appp");
    const fullName = uniqueName("appf");
    const partial = await approveThenAsk(partialName, true);
    const full = await approveThenAsk(fullName, false);
    expect(content(await stored(partialName))).toEqual(content(await stored(fullName)));
    expect((await stored(partialName)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(partial.chat.messages.value.map((m) => m.id)).toEqual((await stored(partialName)).map((m) => m.id));
    // The follow-up question went alone, after the continued assistant message.
    const followUp = (await requests(partialName)).at(-1)!;
    expect(followUp.messageCount).toBe(1);
    expect(followUp.afterMessageId).toBe(partial.chat.messages.value[1]!.id);
    partial.unmount();
    full.unmount();
  }, 60_000);

  it("a bare sendMessage() after an approval (auto-continue off) resubmits the rewritten assistant message", async () => {
    const partialName = uniqueName("barep");
    const fullName = uniqueName("baref");
    const partial = await approveThenBareSend(partialName, true);
    const full = await approveThenBareSend(fullName, false);
    const resubmit = (await requests(partialName)).at(-1)!;
    expect(resubmit.messageIds).toEqual([partial.chat.messages.value[1]!.id]);
    expect(resubmit.afterMessageId).toBe(partial.chat.messages.value[0]!.id);
    expect(content(await stored(partialName))).toEqual(content(await stored(fullName)));
    expect((await stored(partialName)).map(textOf).join(" ")).toContain("after tools");
    partial.unmount();
    full.unmount();
  }, 60_000);

  it("two tabs with the option on, interleaving sends, never erase each other's messages", async () => {
    const name = uniqueName("tabs");
    const a = openChat(name, { sendOnlyNewMessages: true, body: { script: { echo: true } } });
    const b = openChat(name, { sendOnlyNewMessages: true, body: { script: { echo: true } } });
    await Promise.all([a.chat.ready, b.chat.ready]);
    for (let round = 1; round <= 3; round++) {
      await a.chat.sendMessage({ text: `A${round}` });
      await b.chat.sendMessage({ text: `B${round}` });
    }
    await whenSettled(a.chat);
    await whenSettled(b.chat);
    const texts = (await stored(name)).map(textOf);
    expect(texts).toEqual(["A1", "echo: A1", "B1", "echo: B1", "A2", "echo: A2", "B2", "echo: B2", "A3", "echo: A3", "B3", "echo: B3"]);
    await vi.waitFor(() => expect(a.chat.messages.value.map(textOf)).toEqual(texts));
    await vi.waitFor(() => expect(b.chat.messages.value.map(textOf)).toEqual(texts));
    a.unmount();
    b.unmount();
  }, 60_000);
});

describe("request customization reaches onChatMessage", () => {
  it("a static body object", async () => {
    const name = uniqueName("bodystatic");
    const { chat, unmount } = openChat(name, { body: { tenant: "acme", script: { chunks: 1 } } });
    await chat.sendMessage({ text: "hi" });
    expect((await lastChatMessage(name)).body).toMatchObject({ tenant: "acme" });
    unmount();
  });

  it("a body function, read at send time (async too)", async () => {
    const name = uniqueName("bodyfn");
    let counter = 0;
    const { chat, unmount } = openChat(name, {
      body: async () => ({ sequence: ++counter, script: { chunks: 1 } })
    });
    await chat.sendMessage({ text: "one" });
    await chat.sendMessage({ text: "two" });
    const bodies = (await readLog(name)).filter((entry) => entry.kind === "chat-message").map((entry) => entry.body);
    expect(bodies).toMatchObject([{ sequence: 1 }, { sequence: 2 }]);
    unmount();
  });

  it("prepareSendMessagesRequest's body overrides body, beside clientTools", async () => {
    const name = uniqueName("prepare");
    const seen: Array<{ trigger: string; count: number; id: string }> = [];
    const { chat, unmount } = openChat(name, {
      body: { from: "body", script: { chunks: 1 } },
      tools: { clock: { description: "time", parameters: { type: "object" }, execute: () => "noon" } },
      prepareSendMessagesRequest: ({ trigger, messages, id }) => {
        seen.push({ trigger, count: messages.length, id });
        return { body: { from: "prepare", extra: true } };
      }
    });
    await chat.sendMessage({ text: "hi" });
    const entry = (await waitForLog(name, (e) => e.kind === "chat-message")) as LogEntry & {
      body: Record<string, unknown>;
      clientTools: string[];
    };
    expect(entry.body).toMatchObject({ from: "prepare", extra: true });
    expect(entry.clientTools).toEqual(["clock"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ trigger: "submit-message", count: 1 });
    expect(seen[0]!.id.length).toBeGreaterThan(0);
    unmount();
  });


});

describe("transcript read options", () => {
  // HTTP reads: an ordered agent pushes the transcript on the socket instead.
  onStockAgent();

  it("headers and credentials go with the transcript read", async () => {
    const name = uniqueName("headers");
    const { chat, unmount } = openChat(name, { headers: { "x-tenant": "acme" }, credentials: "include" });
    await chat.ready;
    const read = await waitForLog(name, (entry) => entry.kind === "get-messages");
    expect(read.headers).toMatchObject({ "x-tenant": "acme" });
    unmount();
  });
});
