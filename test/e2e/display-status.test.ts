import type { ChatStatus } from "ai";
import { describe, expect, it, vi } from "vitest";
import { watch } from "vue";
import { openChat, whenOpen, whenSettled, type Chat } from "../support/chat";
import { post, uniqueName } from "../support/e2e";

/** Every value `displayStatus` took, in order, without repeats. */
function recordDisplayStatus(chat: Chat): ChatStatus[] {
  const seen: ChatStatus[] = [chat.displayStatus.value];
  watch(chat.displayStatus, (status) => {
    if (seen.at(-1) !== status) seen.push(status);
  }, { flush: "sync" });
  return seen;
}

describe("displayStatus: one status a chat UI binds", () => {
  it("shows another tab's turn as streaming in a watching tab, and the own turn as its status", async () => {
    const name = uniqueName("display");
    const watcher = openChat(name);
    const sender = openChat(name, { body: { script: { chunks: 30, chunkDelayMs: 30 } } });
    await Promise.all([watcher.chat.ready, sender.chat.ready]);
    await Promise.all([whenOpen(watcher.chat), whenOpen(sender.chat)]);
    const watched = recordDisplayStatus(watcher.chat);
    const sent = recordDisplayStatus(sender.chat);

    const turn = sender.chat.sendMessage({ text: "from the other tab" });
    await vi.waitFor(() => expect(watcher.chat.displayStatus.value).toBe("streaming"), { timeout: 15_000 });
    // The watching tab has no request out: its own status stays ready.
    expect(watcher.chat.status.value).toBe("ready");
    expect(watcher.chat.isServerStreaming.value).toBe(true);
    await turn;
    await whenSettled(watcher.chat);
    await whenSettled(sender.chat);

    expect(watched).toEqual(["ready", "streaming", "ready"]);
    expect(sent).toEqual(["ready", "submitted", "streaming", "ready"]);
    watcher.unmount();
    sender.unmount();
  });

  it("shows a turn the server started as streaming", async () => {
    const name = uniqueName("display-server");
    const { chat, unmount } = openChat(name);
    await chat.ready;
    await whenOpen(chat);
    const seen = recordDisplayStatus(chat);
    const response = await post(name, "server-turn", { text: "scheduled", script: { chunks: 20, chunkDelayMs: 30 } });
    expect(response.status).toBe(202);
    await vi.waitFor(() => expect(chat.displayStatus.value).toBe("streaming"), { timeout: 15_000 });
    expect(chat.status.value).toBe("ready");
    await whenSettled(chat);
    expect(seen).toEqual(["ready", "streaming", "ready"]);
    unmount();
  });
});
