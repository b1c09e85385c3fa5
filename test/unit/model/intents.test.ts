import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { LocalIntents } from "../../../src/core/model/intents";
import { assistant, idsOf, user } from "../../support/model-harness";

describe("LocalIntents", () => {
  describe("Rule (rewrite retires)", () => {
    it("retires the rewrite when its request settles, saying whether a frame carried what it removed", () => {
      const intents = new LocalIntents<UIMessage>();
      const before = [user("u1"), assistant("a1")];
      const rewrite = intents.beginRewrite(before, undefined, 0);
      intents.settleRewrite([user("u1")]);
      expect(intents.isRetracted("a1", [user("u1")])).toBe(true);
      expect(intents.endRewrite(rewrite, 0)).toBe(true);
      expect(intents.rewrite).toBeNull();
    });

    it("says nothing is held back when no frame carried a removed message", () => {
      const intents = new LocalIntents<UIMessage>();
      const rewrite = intents.beginRewrite([user("u1"), assistant("a1")], undefined, 0);
      intents.settleRewrite([user("u1")]);
      expect(intents.endRewrite(rewrite, 0)).toBe(false);
    });

    it("Rule (a raced request reads back): a transcript frame since it began makes it read back, also when none carried what it removed", () => {
      const intents = new LocalIntents<UIMessage>();
      const rewrite = intents.beginRewrite([user("u1"), assistant("a1")], undefined, 4);
      intents.settleRewrite([user("u1")]);
      expect(intents.endRewrite(rewrite, 5)).toBe(true);
    });

    it("leaves a later rewrite in place: it took over what the earlier one removed", () => {
      const intents = new LocalIntents<UIMessage>();
      const first = intents.beginRewrite([user("u1"), assistant("a1")], undefined, 0);
      intents.settleRewrite([user("u1")]);
      const second = intents.beginRewrite([user("u1"), assistant("a2")], undefined, 0);
      expect(intents.endRewrite(first, 0)).toBe(false);
      expect(intents.rewrite).toBe(second);
      intents.settleRewrite([user("u1")]);
      expect([...second.retracted].toSorted()).toEqual(["a1", "a2"]);
    });
  });

  it("reads a rewrite's cut once, and an edit's new copy", () => {
    const intents = new LocalIntents<UIMessage>();
    intents.beginRewrite([user("u1", "old"), assistant("a1")], "u1", 0);
    const edited = user("u1", "new");
    intents.settleRewrite([edited]);
    intents.settleRewrite([]);
    expect([...intents.rewrite!.retracted]).toEqual(["a1"]);
    expect(intents.rewrite!.edited).toBe(edited);
  });

  describe("Rule (clear retires)", () => {
    it("retires only when the newest read issued after the clear settles", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["a"]), 3);
      expect(intents.readSettled(3, true, [])).toBeUndefined();
      expect(intents.clear).not.toBeNull();
      expect(intents.readSettled(4, false, [])).toBeUndefined();
      expect(intents.clear).not.toBeNull();
      intents.readSettled(4, true, []);
      expect(intents.clear).toBeNull();
    });

    it("returns what arrived during the hold that the stored transcript lacks", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["old"]), 0);
      expect(intents.isRetracted("x", [])).toBe(false);
      expect(intents.isRetracted("y", [])).toBe(false);
      expect([...intents.readSettled(1, true, [user("y")])!.unconfirmed]).toEqual(["x"]);
    });

    it("keeps a cleared message an answer holds once that answer holds what arrived during the hold (it was read after the clear)", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["old"]), 0);
      intents.isRetracted("new", []);
      expect([...intents.readSettled(1, true, [user("old"), user("new")])!.cleared]).toEqual([]);
      const stale = new LocalIntents<UIMessage>();
      stale.beginClear(new Set(["old"]), 0);
      stale.isRetracted("new", []);
      expect([...stale.readSettled(1, true, [user("old")])!.cleared]).toEqual(["old"]);
    });

    it("removes nothing when the read that ends the hold was not admitted", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["old"]), 0);
      intents.isRetracted("x", []);
      expect(intents.readSettled(1, true, null)?.unconfirmed.size).toBe(0);
      expect(intents.clear).toBeNull();
    });

    it("never counts a message already on screen as new during the hold", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["old"]), 0);
      intents.isRetracted("mine", [user("mine")]);
      expect(intents.readSettled(1, true, [])?.unconfirmed.size).toBe(0);
    });
  });

  describe("Rule (shown through intents)", () => {
    it("leaves out what a rewrite or a clear removed and shows the edited copy", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginRewrite([user("u1", "old"), assistant("a1")], "u1", 0);
      const edited = user("u1", "new");
      const shown = intents.shown([user("u1", "old"), assistant("a1"), user("u2")], [edited]);
      expect(idsOf(shown)).toEqual(["u1", "u2"]);
      expect(shown[0]).toBe(edited);
    });

    it("a frame with another copy of the edited message makes the edit read back once it settles", () => {
      const intents = new LocalIntents<UIMessage>();
      const rewrite = intents.beginRewrite([user("u1", "old")], "u1", 0);
      const edited = user("u1", "mine");
      expect(intents.shown([user("u1", "mine")], [edited])[0]).toBe(edited);
      expect(rewrite.heldBack).toBe(false);
      expect(intents.shown([user("u1", "theirs")], [edited])[0]).toBe(edited);
      expect(intents.endRewrite(rewrite, 0)).toBe(true);
    });

    it("leaves out cleared messages during a clear's hold", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.beginClear(new Set(["a", "b"]), 0);
      expect(idsOf(intents.shown([user("a"), user("b"), user("c")], []))).toEqual(["c"]);
    });

    it("returns the server's list itself when no intent applies", () => {
      const intents = new LocalIntents<UIMessage>();
      const messages = [user("a")];
      expect(intents.shown(messages, [])).toBe(messages);
    });
  });

  describe("Rule (unconfirmed sends stay)", () => {
    it("keeps own sends of the request in flight that a frame lacks, after it", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("mine", { lacked: false });
      const next = intents.restoreSends([user("a")], [user("a"), user("mine")], false);
      expect(idsOf(next)).toEqual(["a", "mine"]);
      expect(intents.unechoed.has("mine")).toBe(true);
    });

    it("Rule (own question before its reply): puts the sends before the live reply the frame ends with", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("mine", { lacked: false });
      const current = [user("mine"), assistant("live")];
      expect(idsOf(intents.restoreSends([user("theirs"), assistant("live")], current, false, "live"))).toEqual(["theirs", "mine", "live"]);
      // Without a live reply at the tail the sends go last, as before.
      expect(idsOf(intents.restoreSends([user("theirs"), assistant("other")], current, false, "live"))).toEqual(["theirs", "other", "mine"]);
    });

    it("retires a send the frame carries", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("mine", { lacked: false });
      intents.restoreSends([user("mine")], [user("mine")], false);
      expect(intents.unechoed.size).toBe(0);
    });

    it("restores buffered sends only over a connect-time transcript, then forgets them", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.buffered.add("q");
      expect(idsOf(intents.restoreSends([user("a")], [user("q")], true))).toEqual(["a", "q"]);
      intents.buffered.add("q");
      expect(idsOf(intents.restoreSends([user("a")], [user("q")], false))).toEqual(["a"]);
      expect(intents.buffered.size).toBe(0);
    });
  });

  describe("Rule (a send retires with its request)", () => {
    it("retires the sends of requests that ended and keeps those of a request still running", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("u1", { lacked: false });
      intents.unechoed.set("u2", { lacked: false });
      intents.sendWentOut("r1", "u1");
      intents.sendWentOut("r2", "u2");
      intents.sendsEnded((request) => request === "r2", true);
      expect([...intents.unechoed.keys()]).toEqual(["u2"]);
    });

    it("binds a send to the newest request that carried it, and keeps an unsent one unless asked", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("u1", { lacked: false });
      intents.sendWentOut("r1", "u1");
      intents.sendWentOut("r2", "u1");
      intents.sendWentOut("r3", "elsewhere");
      expect(intents.unechoed.get("u1")?.request).toBe("r2");
      intents.unechoed.set("u2", { lacked: false });
      intents.sendsEnded(() => true, false);
      expect(intents.unechoed.has("u2")).toBe(true);
      intents.sendsEnded(() => true, true);
      expect([...intents.unechoed.keys()]).toEqual(["u1"]);
    });

    it("a skipped end refuses only its own request's sends that a frame lacked", () => {
      const intents = new LocalIntents<UIMessage>();
      intents.unechoed.set("u1", { lacked: true, request: "r1" });
      intents.unechoed.set("u2", { lacked: true, request: "r2" });
      expect([...intents.refused("r2")]).toEqual(["u2"]);
      expect([...intents.unechoed.keys()]).toEqual(["u1"]);
    });
  });

  it("marks a submit's user message unconfirmed unless the server holds it", () => {
    const intents = new LocalIntents<UIMessage>();
    const messages = [user("u1"), user("u2")];
    intents.requestPrepared({ messages, trigger: "submit-message" }, new Set(["u1"]), messages);
    expect([...intents.unechoed.keys()]).toEqual(["u2"]);
    intents.unechoed.clear();
    intents.requestPrepared({ messages, trigger: "submit-message" }, new Set(["u2"]), messages);
    intents.requestPrepared({ messages, trigger: "regenerate-message" }, new Set(), messages);
    expect(intents.unechoed.size).toBe(0);
  });

  it("a reset drops every intent and hands back the queued sends", () => {
    const intents = new LocalIntents<UIMessage>();
    intents.unechoed.set("a", { lacked: false });
    intents.buffered.add("b");
    intents.beginRewrite([user("x")], undefined, 0);
    const entry = { message: user("q"), options: undefined, settle: () => {} };
    intents.queued.push(entry);
    expect(intents.reset()).toEqual([entry]);
    expect([intents.unechoed.size, intents.buffered.size, intents.queued.length, intents.rewrite]).toEqual([0, 0, 0, null]);
  });
});
