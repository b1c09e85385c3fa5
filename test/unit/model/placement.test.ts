import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { ReplyPlacement } from "../../../src/core/model/placement";
import { ArrayList, assistant, idsOf, textOf, toolCallMessage, user } from "../../support/model-harness";

function placement(messages: UIMessage[]) {
  const list = new ArrayList<UIMessage>(messages);
  return { list, placement: new ReplyPlacement<UIMessage>(list) };
}

describe("ReplyPlacement", () => {
  describe("Rule (live reply overlay, #1778 #2464)", () => {
    it("keeps the reply streaming here at the tail of a frame that lags behind it, with its live copy", () => {
      const live = assistant("a1", "live text");
      const { placement: p } = placement([user("u1"), live]);
      p.protect("a1", false);
      const next = p.keepLiveReply([user("u1"), assistant("a1", "li"), user("u2")], [user("u1"), live]);
      expect(idsOf(next)).toEqual(["u1", "u2", "a1"]);
      expect(next[2]).toBe(live);
    });

    it("adds the live reply a frame does not carry yet", () => {
      const live = assistant("a1", "x");
      const { placement: p } = placement([user("u1"), live]);
      p.protect("a1", false);
      expect(idsOf(p.keepLiveReply([user("u1")], [user("u1"), live]))).toEqual(["u1", "a1"]);
    });

    it("lets go once a frame shows the server moved past the reply", () => {
      const { placement: p } = placement([user("u1"), assistant("a1")]);
      p.protect("a1", false);
      const snapshot = [user("u1"), assistant("a1"), user("u2"), assistant("a2")];
      expect(p.keepLiveReply(snapshot, [])).toEqual(snapshot);
      expect(p.protectedId).toBeUndefined();
    });

    it("takes the reply's place from a frame that holds it: it goes back there when it finishes", () => {
      const { list, placement: p } = placement([assistant("a1", "x")]);
      p.protect("a1", false);
      list.messages = p.keepLiveReply([user("u0"), assistant("a1", "x")], list.messages);
      list.messages = [...list.messages, user("u2")];
      p.release("a1");
      expect(idsOf(list.messages)).toEqual(["u0", "a1", "u2"]);
    });

    it("passes the frame through when nothing streams here", () => {
      const { placement: p } = placement([]);
      const snapshot = [user("u1")];
      expect(p.keepLiveReply(snapshot, [])).toEqual(snapshot);
    });
  });

  it("puts a finished reply back after its anchor", () => {
    const { list, placement: p } = placement([user("u1"), assistant("a1")]);
    p.protect("a1", false);
    list.messages = [user("u1"), user("u2"), assistant("a1")];
    p.release("a1");
    expect(idsOf(list.messages)).toEqual(["u1", "a1", "u2"]);
    expect(p.protectedId).toBeUndefined();
  });

  it("puts a reply anchored first at the front; an unknown anchor (before the transcript) leaves it", () => {
    const first = placement([assistant("a1")]);
    first.placement.protect("a1", false);
    first.list.messages = [user("x"), assistant("a1")];
    first.placement.release("a1");
    expect(idsOf(first.list.messages)).toEqual(["a1", "x"]);
    const loading = placement([assistant("a1")]);
    loading.placement.protect("a1", true);
    loading.list.messages = [user("x"), assistant("a1")];
    loading.placement.release("a1");
    expect(idsOf(loading.list.messages)).toEqual(["x", "a1"]);
  });

  it("a read that merged around the live reply re-anchors it where the merge put it", () => {
    const { list, placement: p } = placement([assistant("a1")]);
    p.protect("a1", false);
    const merged = p.keepLiveCopy([user("s1"), assistant("s2"), assistant("a1")], list.messages, true);
    list.messages = [...merged, user("u9")];
    p.release("a1");
    expect(idsOf(list.messages)).toEqual(["s1", "s2", "a1", "u9"]);
  });

  it("Rule (a read lags the live reply): the read's stored copy of the streaming reply gives way to the live one", () => {
    const live = assistant("a1", "w0 w1");
    const { placement: p } = placement([user("u1"), live]);
    p.protect("a1", false);
    const merged = p.keepLiveCopy([user("u1"), assistant("a1"), user("u2")], [user("u1"), live], true);
    expect(merged.map((m) => m.id)).toEqual(["u1", "a1", "u2"]);
    expect(merged[1]).toBe(live);
    // Nothing streams it any more (a close cut it): the stored copy wins.
    expect(p.keepLiveCopy([user("u1"), assistant("a1")], [user("u1"), live], false)[1]).not.toBe(live);
    p.unprotect();
    const after = p.keepLiveCopy([user("u1"), assistant("a1")], [user("u1"), live], true);
    expect(after[1]).not.toBe(live);
  });

  it("a send while a reply streams here keeps that reply at the tail", () => {
    const { list, placement: p } = placement([user("u1"), assistant("a1"), user("u2")]);
    p.protectStreamingTail();
    expect(idsOf(list.messages)).toEqual(["u1", "u2", "a1"]);
    expect(p.protectedId).toBe("a1");
  });

  it("a socket close unprotects the cut-off copy", () => {
    const { placement: p } = placement([user("u1"), assistant("a1")]);
    p.protect("a1", false);
    p.unprotect();
    expect(p.keepLiveReply([user("u1")], [user("u1"), assistant("a1")]).map((m) => m.id)).toEqual(["u1"]);
  });

  describe("Rule (continuation lands in place, #1229)", () => {
    it("merges a continuation's message into the pinned message after its parts", () => {
      const pinned = toolCallMessage("a1", "call-1", "output-available");
      const { list, placement: p } = placement([user("u1"), pinned]);
      p.pinLast();
      p.place(assistant("fresh", "continued"));
      expect(idsOf(list.messages)).toEqual(["u1", "a1"]);
      expect(list.messages[1]!.parts.map((part) => part.type)).toEqual(["tool-ask", "text"]);
      // The AI SDK never finds "fresh" on screen, so each write is a push again.
      p.place(assistant("fresh", "continued more"));
      expect(list.messages).toHaveLength(2);
      expect(textOf(list.messages[1])).toBe("continued more");
    });

    it("finds the pinned message by its tool calls after a broadcast renamed it", () => {
      const { list, placement: p } = placement([user("u1"), toolCallMessage("a1", "call-1", "output-available")]);
      p.pinLast();
      list.messages = [user("u1"), toolCallMessage("server-id", "call-1", "output-available")];
      p.place(assistant("fresh", "more"));
      expect(idsOf(list.messages)).toEqual(["u1", "server-id"]);
      expect(textOf(list.messages[1])).toBe("more");
    });

    it("joins a recovered continuation's text to the pinned message's interrupted part", () => {
      const interrupted: UIMessage = { id: "a1", role: "assistant", parts: [{ type: "text", text: "Hel", state: "streaming" }] };
      const { list, placement: p } = placement([user("u1"), interrupted]);
      p.pinLast();
      p.resumeText();
      p.place({ id: "fresh", role: "assistant", parts: [{ type: "text", text: "lo", state: "done" }] });
      expect(list.messages[1]!.parts).toEqual([{ type: "text", text: "Hello", state: "done" }]);
    });

    it("pins only an assistant message at the end", () => {
      const { list, placement: p } = placement([user("u1")]);
      p.pinLast();
      p.place(assistant("a1", "x"));
      expect(idsOf(list.messages)).toEqual(["u1", "a1"]);
    });
  });

  describe("Rule (no seeded copy)", () => {
    it("drops the parts a new reply copied from the assistant before it, also on later writes", () => {
      const { list, placement: p } = placement([user("u1"), toolCallMessage("a1", "call-1", "output-available")]);
      const seeded = toolCallMessage("a2", "call-1", "output-available");
      seeded.parts.push({ type: "text", text: "new" });
      p.place(seeded);
      expect(list.messages[2]!.parts).toEqual([{ type: "text", text: "new" }]);
      const later = { ...seeded, parts: [...seeded.parts, { type: "text" as const, text: "more" }] };
      p.place(later, 2);
      expect(list.messages[2]!.parts.map((part) => (part as { text?: string }).text)).toEqual(["new", "more"]);
      p.finished("a2");
      p.place(later, 2);
      expect(list.messages[2]!.parts).toHaveLength(3);
    });

    it("keeps a reply that does not start with the previous assistant's parts", () => {
      const { list, placement: p } = placement([user("u1"), assistant("a1", "one")]);
      p.place(assistant("a2", "two"));
      expect(textOf(list.messages[2])).toBe("two");
    });
  });
});
