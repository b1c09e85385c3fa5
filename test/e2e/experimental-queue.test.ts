import { describe, expect, it, vi } from "vitest";
import { openChat, whenOpen, whenSettled } from "../support/chat";
import { readLog, stored, textOf, uniqueName } from "../support/e2e";

describe("experimental_queue against a real AIChatAgent (issue 47, 6)", () => {
  it("a message sent while the reply streams waits in experimental_queuedMessages, then goes out after it; sending one now cancels the running turn", async () => {
    const name = uniqueName("sdk-queue");
    const { chat, unmount } = openChat(name, { experimental_queue: true, body: { script: { chunks: 40, chunkDelayMs: 25 } } });
    await whenOpen(chat);
    await chat.ready;
    // A first exchange, so the open's resume probe is answered: a send made before that waits in this chat's own
    // queue (queuedMessages), and so does any send made while that one's turn runs.
    await chat.sendMessage({ text: "zero" });
    await whenSettled(chat);

    const first = chat.sendMessage({ text: "one" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1]).length).toBeGreaterThan(0));
    const second = chat.sendMessage({ text: "two" });
    const third = chat.sendMessage({ text: "three" });
    await vi.waitFor(() => expect(chat.experimental_queuedMessages.value.map(textOf)).toEqual(["two", "three"]));
    expect(chat.messages.value.map(textOf)).not.toContain("two");

    // "three" goes now: the reply to "one" stops (its server turn is cancelled), then "three", then "two".
    await chat.experimental_sendQueuedMessageNow(chat.experimental_queuedMessages.value[1]!.id);
    await Promise.all([first, second, third]);
    await whenSettled(chat);
    expect(chat.experimental_queuedMessages.value).toEqual([]);
    const users = (messages: typeof chat.messages.value) => messages.filter((message) => message.role === "user").map(textOf);
    expect(users(chat.messages.value)).toEqual(["zero", "one", "three", "two"]);
    const log = await readLog(name);
    expect(log.filter((entry) => entry.type === "cf_agent_chat_request_cancel")).toHaveLength(1);
    expect(log.filter((entry) => entry.type === "cf_agent_use_chat_request")).toHaveLength(4);
    await vi.waitFor(async () => expect(users(await stored(name))).toEqual(["zero", "one", "three", "two"]));
    expect((await stored(name)).map((message) => message.id)).toEqual(chat.messages.value.map((message) => message.id));
    unmount();
  });
});
