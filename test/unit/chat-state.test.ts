import type { ChatStatus, UIMessage } from "ai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PublishingChatState } from "../../src/core/chat-state";

const cell = <T>(value: T) => ({ value });
const msg = (id: string, text = id): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text }] });

function make(throttleMs?: number, initial: UIMessage[] = []) {
  const cells = { messages: cell<UIMessage[]>([]), status: cell<ChatStatus>("ready"), error: cell<Error | undefined>(undefined) };
  const writes = { messages: 0 };
  const messages = cells.messages;
  const tracked = {
    get value() {
      return messages.value;
    },
    set value(next: UIMessage[]) {
      writes.messages++;
      messages.value = next;
    }
  };
  const state = new PublishingChatState({ initialMessages: initial, ...cells, messages: tracked, throttleMs });
  return { state, cells, writes };
}

describe("PublishingChatState", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("publishes copies, so later in-place mutations never reach a rendered message", () => {
    const { state, cells } = make();
    const live = msg("a", "he");
    state.pushMessage(live);
    const published = cells.messages.value[0]!;
    (live.parts[0] as { text: string }).text += "llo";
    expect((published.parts[0] as { text: string }).text).toBe("he");
  });

  it("keeps the identity of unchanged messages across publications", () => {
    const { state, cells } = make(undefined, [msg("a"), msg("b")]);
    const first = cells.messages.value;
    state.replaceMessage(1, msg("b", "changed"));
    expect(cells.messages.value).not.toBe(first);
    expect(cells.messages.value[0]).toBe(first[0]);
    expect(cells.messages.value[1]).not.toBe(first[1]);
  });

  it("publishes the first change at once, then at most once per window", () => {
    const { state, cells, writes } = make(50);
    const before = writes.messages;
    const live = msg("a", "");
    state.pushMessage(live);
    expect(writes.messages).toBe(before + 1);
    for (let i = 0; i < 20; i++) {
      (live.parts[0] as { text: string }).text += "x";
      state.replaceMessage(0, live);
    }
    expect(writes.messages).toBe(before + 1);
    vi.advanceTimersByTime(50);
    expect(writes.messages).toBe(before + 2);
    expect((cells.messages.value[0]!.parts[0] as { text: string }).text).toHaveLength(20);
  });

  it("never delays status, and flushes messages before a terminal status shows", () => {
    const { state, cells } = make(50);
    const live = msg("a", "");
    state.status = "streaming";
    expect(cells.status.value).toBe("streaming");
    state.pushMessage(live);
    (live.parts[0] as { text: string }).text = "final";
    state.replaceMessage(0, live);
    expect((cells.messages.value[0]!.parts[0] as { text: string }).text).toBe("");
    state.status = "ready";
    expect(cells.status.value).toBe("ready");
    expect((cells.messages.value[0]!.parts[0] as { text: string }).text).toBe("final");
  });

  it("stops publishing and releases its timer on dispose", () => {
    const { state, cells } = make(50);
    state.pushMessage(msg("a"));
    state.pushMessage(msg("b"));
    state.dispose();
    expect(vi.getTimerCount()).toBe(0);
    state.pushMessage(msg("c"));
    expect(cells.messages.value.map((m) => m.id)).toEqual(["a"]);
  });

  it("shows queued messages after the working ones without handing them to the chat", () => {
    const { state, cells } = make(undefined, [msg("a")]);
    state.setTail([msg("q", "queued")]);
    expect(cells.messages.value.map((m) => m.id)).toEqual(["a", "q"]);
    expect(state.messages.map((m) => m.id)).toEqual(["a"]);
    state.setTail([]);
    expect(cells.messages.value.map((m) => m.id)).toEqual(["a"]);
  });
});
