import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import {
  applyMessageUpdate,
  applySnapshot,
  firstReadAnswered,
  localClear,
  localReplace,
  readAnswered,
  receivedClear,
  removeEmptyReplies,
  settleEndedReplies
} from "../../../src/core/model/transcript-rules";
import { requested } from "../../../src/core/model/continuation";
import { assistant, idsOf, makeModel, textOf, toolCallMessage, user } from "../../support/model-harness";

const queuedSend = (id: string) => ({ message: user(id), options: undefined, settle: vi.fn() });

/** A model that holds version 5 of [u1, a1], as an ordered server's connect frame leaves it. */
function atVersion5() {
  const harness = makeModel();
  applySnapshot(harness.m, [user("u1"), assistant("a1", "stored")], true, 5);
  return harness;
}

describe("transcript rules", () => {
  describe("Rule (the server's word, projected)", () => {
    it("replaces the screen with the frame and folds its ids into the base", () => {
      const { m } = makeModel({ messages: [user("old")] });
      applySnapshot(m, [user("u1"), assistant("a1")], false);
      expect(idsOf(m.messages)).toEqual(["u1", "a1"]);
      expect([...m.base.known]).toEqual(["u1", "a1"]);
    });

    it("shows the frame through intents and keeps the unconfirmed send after it", () => {
      const { m } = makeModel({ messages: [user("u1"), user("mine")] });
      m.intents.unechoed.set("mine", { lacked: false });
      m.intents.beginClear(new Set(["gone"]), 0);
      applySnapshot(m, [user("u1"), user("gone")], false);
      expect(idsOf(m.messages)).toEqual(["u1", "mine"]);
    });

    it("keeps the reply streaming here and the observed turn over a lagging frame", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("a1", "live")] });
      m.placement.protect("a1", false);
      applySnapshot(m, [user("u1"), user("u2")], false);
      expect(idsOf(m.messages)).toEqual(["u1", "u2", "a1"]);
      const watching = makeModel();
      const observed = watching.m.observed.begin("r", false);
      observed.apply({ type: "start", messageId: "b1" });
      observed.apply({ type: "text-delta", id: "t", delta: "streamed" });
      applySnapshot(watching.m, [user("u1")], false);
      expect(textOf(watching.m.messages[1])).toBe("streamed");
    });

    it("Rule (own question before its reply): a mid-reply frame without this tab's question keeps it before the reply streaming here, also once the reply ends", () => {
      const { m } = makeModel({ messages: [user("mine"), assistant("a1", "live")] });
      m.intents.unechoed.set("mine", { lacked: false, request: "r1" });
      m.placement.protect("a1", false);
      // Another client's request broadcast its own list, which lacks this tab's question.
      applySnapshot(m, [user("theirs")], false);
      expect(idsOf(m.messages)).toEqual(["theirs", "mine", "a1"]);
      expect(m.messages.at(-1)?.role).toBe("assistant");
      m.placement.release("a1");
      expect(idsOf(m.messages)).toEqual(["theirs", "mine", "a1"]);
    });

    it("moves the clock: a read out meanwhile is made again", () => {
      const { m, io } = makeModel();
      const read = m.base.read(true);
      applySnapshot(m, [user("u1")], false);
      readAnswered(m, read, [user("stale")]);
      expect(idsOf(m.messages)).toEqual(["u1"]);
      expect(io.reads).toMatchObject([{ always: true, attempt: 2 }]);
    });
  });

  describe("Rule (message updated, #1094)", () => {
    it("replaces the message with its id, and never appends", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("a1", "old")] });
      applyMessageUpdate(m, assistant("a1", "new"));
      expect(textOf(m.messages[1])).toBe("new");
      applyMessageUpdate(m, assistant("unknown", "x"));
      expect(idsOf(m.messages)).toEqual(["u1", "a1"]);
    });

    it("finds a message the server renamed by its tool calls and keeps the local id", () => {
      const { m } = makeModel({ messages: [toolCallMessage("local", "c1")] });
      applyMessageUpdate(m, toolCallMessage("server", "c1", "output-available"));
      expect(m.messages[0]).toMatchObject({ id: "local", parts: [{ state: "output-available" }] });
      expect(m.base.known.has("local") && m.base.known.has("server")).toBe(true);
    });

    it("leaves a message a rewrite of this client's removed, and moves the clock", () => {
      const { m, io } = makeModel({ messages: [user("u1"), assistant("a1")] });
      const read = m.base.read(false);
      m.intents.beginRewrite(m.messages, undefined, 0);
      m.replace([user("u1")]);
      applyMessageUpdate(m, assistant("a1", "back"));
      expect(idsOf(m.messages)).toEqual(["u1"]);
      readAnswered(m, read, []);
      expect(io.reads).toHaveLength(1);
    });
  });

  describe("Rule (received clear)", () => {
    it("empties the transcript and every intent, ends the observed turn, and reads the final transcript", () => {
      const { m, io } = makeModel({ messages: [user("u1")] });
      const entry = queuedSend("q");
      m.intents.queued.push(entry);
      m.observed.begin("r", false);
      m.turns.heldTurn = "h";
      m.turns.recordApplied("r", 3);
      m.continuation = requested(m.continuation);
      expect(receivedClear(m)).toEqual([entry]);
      expect(m.messages).toEqual([]);
      expect([m.observed.active, m.turns.heldTurn, m.continuation.kind, m.turns.get("r")?.applied]).toEqual([false, null, "idle", null]);
      expect(io.reads).toMatchObject([{ always: true, attempt: 1 }]);
      expect(io.flagsValue).toMatchObject({ serverStreaming: false, recovering: false, toolContinuation: false });
    });
  });

  it("Rule (received clear): this client's own turns it interrupted read back when they end", () => {
    const { m, io, local } = makeModel({ messages: [user("u1")] });
    local.add("mine");
    receivedClear(m);
    expect(m.turns.get("mine")?.clear).toBe(true);
    expect(io.reads.map((read) => read.always)).toEqual([true]);
  });

  describe("Rule (a skipped version changes nothing, exact sync)", () => {
    it("a clear that skips a version is not applied: the transcript and version stay, and a snapshot is asked for", () => {
      const { m, io } = atVersion5();
      const entry = queuedSend("q");
      m.intents.queued.push(entry);
      expect(receivedClear(m, 7)).toEqual([]);
      expect(idsOf(m.messages)).toEqual(["u1", "a1"]);
      expect(m.base.version).toBe(5);
      expect(m.intents.queued).toEqual([entry]);
      expect(io.snapshots).toBe(1);
      // The snapshot answer brings the transcript the server holds.
      applySnapshot(m, [user("u1"), assistant("a1", "stored"), user("u2")], false, 6);
      expect(idsOf(m.messages)).toEqual(["u1", "a1", "u2"]);
      expect(m.base.version).toBe(6);
    });

    it("a clear at the next version applies; one at the version held or older is dropped without a snapshot", () => {
      const { m, io } = atVersion5();
      receivedClear(m, 5);
      receivedClear(m, 4);
      expect([idsOf(m.messages), m.base.version, io.snapshots]).toEqual([["u1", "a1"], 5, 0]);
      receivedClear(m, 6);
      expect([idsOf(m.messages), m.base.version, io.snapshots, io.reads.length]).toEqual([[], 6, 0, 0]);
    });

    it("a message update that skips a version changes nothing until the snapshot answers", () => {
      const { m, io } = atVersion5();
      applyMessageUpdate(m, assistant("a1", "skipped ahead"), 7);
      expect(textOf(m.messages[1])).toBe("stored");
      expect([m.base.version, io.snapshots]).toEqual([5, 1]);
      expect((m.base.messages as UIMessage[]).map((message) => textOf(message))).toEqual(["u1", "stored"]);
      applyMessageUpdate(m, assistant("a1", "next"), 6);
      expect([textOf(m.messages[1]), m.base.version, io.snapshots]).toEqual(["next", 6, 1]);
    });

    it("a versioned partial frame before any versioned transcript asks for a snapshot and changes nothing", () => {
      const { m, io } = makeModel({ messages: [user("u1"), assistant("a1", "shown")] });
      applyMessageUpdate(m, assistant("a1", "versioned"), 3);
      receivedClear(m, 4);
      expect([idsOf(m.messages), textOf(m.messages[1]), m.base.version, io.snapshots]).toEqual([["u1", "a1"], "shown", null, 2]);
    });
  });

  describe("Rule (versions end the holds, exact sync)", () => {
    it("the first versioned transcript ends a clear's hold and a rewrite's begun before it, and shows in full", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("a1")] });
      m.intents.beginClear(new Set(["u1", "a1"]), 0);
      m.intents.beginRewrite(m.messages, undefined, 0);
      applySnapshot(m, [user("u1"), assistant("a1")], true, 0);
      expect([m.intents.clear, m.intents.rewrite]).toEqual([null, null]);
      expect(idsOf(m.messages)).toEqual(["u1", "a1"]);
    });

    it("a transcript without a version leaves the holds to their reads", () => {
      const { m } = makeModel({ messages: [user("u1")] });
      m.intents.beginClear(new Set(["u1"]), 0);
      applySnapshot(m, [user("u1")], false);
      expect(m.intents.clear).not.toBeNull();
      expect(idsOf(m.messages)).toEqual([]);
    });
  });

  describe("Rule (first load)", () => {
    it("puts the stored transcript before what is on screen; the screen's copies win", () => {
      const { m } = makeModel({ messages: [user("u2", "mine")] });
      const read = (m.base.firstLoad = m.base.read(false));
      applySnapshot(m, [user("u2", "mine")], false);
      firstReadAnswered(m, read, [user("u1"), user("u2", "stored")]);
      expect(idsOf(m.messages)).toEqual(["u1", "u2"]);
      expect(textOf(m.messages[1])).toBe("mine");
    });

    it("yields to a local replacement made while it was out", () => {
      const { m } = makeModel();
      const read = (m.base.firstLoad = m.base.read(false));
      localReplace(m, [user("set")], false);
      firstReadAnswered(m, read, [user("stored")]);
      expect(idsOf(m.messages)).toEqual(["set"]);
    });

    it("asks for the effects pass either way: sends queued while it was out may go", () => {
      const dropped = makeModel();
      const read = (dropped.m.base.firstLoad = dropped.m.base.read(false));
      localReplace(dropped.m, [], false);
      firstReadAnswered(dropped.m, read, [user("stored")]);
      expect([dropped.io.reconciles, dropped.m.base.firstLoad]).toEqual([1, "done"]);
      const failed = makeModel();
      firstReadAnswered(failed.m, (failed.m.base.firstLoad = failed.m.base.read(false)), null);
      expect([failed.io.reconciles, failed.m.base.firstLoad]).toEqual([1, "done"]);
    });

    it("ignores the answer to a first load that is no longer the one out", () => {
      const { m, io } = makeModel();
      const stale = m.base.read(false);
      m.base.firstLoad = "done";
      firstReadAnswered(m, stale, [user("stored")]);
      expect([idsOf(m.messages), io.reconciles]).toEqual([[], 0]);
    });
  });

  describe("Rule (an overtaken first load still checks)", () => {
    it("a first load a connect-time transcript answered first counts for an adopted send's check; one that failed is made again", () => {
      for (const answered of [true, false]) {
        const { m, io } = makeModel();
        m.adopt([user("kept")]);
        const check = m.intents.queued[0]!.check!;
        const read = (m.base.firstLoad = m.base.read(false));
        applySnapshot(m, [], true, 0);
        firstReadAnswered(m, read, answered ? [] : null);
        // Answered: the check counts it and the outbox looks again; failed: the check gets a read of its own.
        const expected = answered ? [true, 1, 1] : [false, 0, 2];
        expect([m.base.settledRead >= check, io.reconciles, io.reads.length]).toEqual(expected);
      }
    });
  });

  describe("Rule (a cut reply stays only if stored)", () => {
    it("the first admitted read made after the cut turn ended decides: a reply it lacks goes, one it holds stays", () => {
      for (const stored of [[], [assistant("a1", "kept")]]) {
        const { m } = makeModel({ messages: [assistant("a1", "rebuilt after the clear")] });
        m.turns.cutReplies.set("a1", m.base.newestRead);
        readAnswered(m, m.base.read(true), stored);
        expect(idsOf(m.messages)).toEqual(stored.length > 0 ? ["a1"] : []);
        expect(m.turns.cutReplies.size).toBe(0);
      }
    });

    it("a read a list of this client's can overtake decides nothing (the list may carry the reply); a later one does", () => {
      const { m } = makeModel({ messages: [assistant("a1")] });
      m.turns.cutReplies.set("a1", m.base.newestRead);
      const read = m.base.read(true);
      m.base.listWritten();
      readAnswered(m, read, []);
      expect([idsOf(m.messages), m.turns.cutReplies.has("a1")]).toEqual([["a1"], true]);
      readAnswered(m, m.base.read(true), []);
      expect([idsOf(m.messages), m.turns.cutReplies.has("a1")]).toEqual([[], false]);
    });

    it("a read that left before the turn ended decides nothing", () => {
      const { m } = makeModel({ messages: [assistant("a1")] });
      const early = m.base.read(true);
      m.turns.cutReplies.set("a1", m.base.newestRead);
      readAnswered(m, early, []);
      expect([idsOf(m.messages), m.turns.cutReplies.has("a1")]).toEqual([["a1"], true]);
    });

    it("Rule (unnamed reply gives way), exact sync: a reply built under an id of this client's goes once the chat settles", () => {
      const { m } = makeModel();
      applySnapshot(m, [assistant("s1")], true, 3);
      m.list.messages = [assistant("s1"), assistant("gen-1")];
      m.turns.unnamedReplies.add("gen-1");
      settleEndedReplies(m);
      expect([idsOf(m.messages), m.turns.unnamedReplies.size]).toEqual([["s1"], 0]);
    });

    it("with exact sync, the stored transcript at the version held decides once the chat settles", () => {
      for (const stored of [[], [assistant("a1")]]) {
        const { m } = makeModel();
        applySnapshot(m, stored, true, 3);
        m.list.messages = [assistant("a1", "rebuilt after the clear")];
        m.turns.cutReplies.set("a1", 0);
        settleEndedReplies(m);
        expect(idsOf(m.messages)).toEqual(stored.length > 0 ? ["a1"] : []);
      }
    });
  });

  describe("reads after the first (readAnswered)", () => {
    it("merges an admitted answer with mergeMessages, through the intents", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("removed")] });
      m.intents.beginRewrite(m.messages, undefined, 0);
      m.replace([user("u1")]);
      const read = m.base.read(true);
      readAnswered(m, read, [user("u1"), assistant("removed")]);
      expect(idsOf(m.messages)).toEqual(["u1"]);
      const plain = makeModel({ messages: [user("local")] });
      readAnswered(plain.m, plain.m.base.read(false), [user("s1")]);
      expect(idsOf(plain.m.messages)).toEqual(["s1", "local"]);
    });

    it("keeps the screen when mergeMessages throws or returns something else than an array", () => {
      const error = vi.spyOn(console, "error").mockImplementation(() => {});
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const throwing = makeModel({ messages: [user("keep")], settings: { mergeMessages: () => { throw new Error("x"); } } });
      readAnswered(throwing.m, throwing.m.base.read(false), [user("s")]);
      expect(idsOf(throwing.m.messages)).toEqual(["keep"]);
      const wrong = makeModel({ messages: [user("keep")], settings: { mergeMessages: () => "nope" as never } });
      readAnswered(wrong.m, wrong.m.base.read(false), [user("s")]);
      expect(idsOf(wrong.m.messages)).toEqual(["keep"]);
      expect([error.mock.calls.length, warn.mock.calls.length]).toEqual([1, 1]);
      error.mockRestore();
      warn.mockRestore();
    });

    it("ends a clear's hold, removing what arrived meanwhile that the stored transcript lacks", () => {
      const { m, io } = makeModel({ messages: [user("old")] });
      expect(localClear(m, [], true).read).toBe(true);
      m.read(true);
      applySnapshot(m, [user("old"), user("stale-new")], false);
      expect(idsOf(m.messages)).toEqual(["stale-new"]);
      // The frame overtook the read: it is made again, and the hold waits for that one.
      readAnswered(m, io.reads[0]!.read, [user("old")]);
      expect(m.intents.clear).not.toBeNull();
      readAnswered(m, io.reads[1]!.read, []);
      expect(m.intents.clear).toBeNull();
      expect(m.messages).toEqual([]);
    });
  });

  describe("Rule (no empty replies)", () => {
    it("removes a reply whose turn ended without a part, and only that", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("empty"), assistant("full", "x")] });
      m.turns.endedReplies.add("empty");
      m.turns.endedReplies.add("full");
      removeEmptyReplies(m);
      expect(idsOf(m.messages)).toEqual(["u1", "full"]);
      expect(m.turns.endedReplies.size).toBe(0);
    });
  });

  describe("Rule (local clear)", () => {
    it("empties the screen, sends the clear, marks the turns it interrupts and holds the cleared messages back", () => {
      const { m, io, local } = makeModel({ messages: [user("u1"), assistant("a1")] });
      io.statusValue = "streaming";
      local.add("mine");
      const entry = queuedSend("q");
      m.intents.queued.push(entry);
      const { dropped, read } = localClear(m, ["watched", null], true);
      expect([dropped, read]).toEqual([[entry], true]);
      expect(io.sentTypes).toEqual(["cf_agent_chat_clear"]);
      expect([m.turns.get("mine")?.clear, m.turns.get("watched")?.clear]).toEqual([true, true]);
      applySnapshot(m, [user("u1"), assistant("a1")], false);
      expect(m.messages).toEqual([]);
    });

    it("holds nothing back without a reader or with the socket down", () => {
      for (const [open, canRead] of [
        [true, false],
        [false, true]
      ] as Array<[boolean, boolean]>) {
        const { m } = makeModel({ messages: [user("u1")], open });
        expect(localClear(m, [], canRead).read).toBe(false);
        expect(m.intents.clear).toBeNull();
      }
    });

    it("holds back and reads also with nothing on screen: a broadcast from before the clear may still come", () => {
      const { m, io } = makeModel();
      expect(localClear(m, [], true).read).toBe(true);
      m.read(true);
      applySnapshot(m, [user("stale")], false);
      readAnswered(m, io.reads[0]!.read, []);
      expect(io.reads).toHaveLength(2);
      readAnswered(m, io.reads[1]!.read, []);
      expect(m.messages).toEqual([]);
    });

    it("marks every request this client still streams, also when the AI SDK already says ready", () => {
      const { m, local } = makeModel();
      local.add("earlier");
      localClear(m, [], true);
      expect(m.turns.get("earlier")?.clear).toBe(true);
    });

    it("ends the held and recovering turns: the clear cancels every turn", () => {
      const { m } = makeModel();
      m.turns.heldTurn = "h";
      m.turns.recoveringTurn = "r";
      localClear(m, [], true);
      expect([m.turns.heldTurn, m.turns.recoveringTurn]).toEqual([null, null]);
    });
  });

  describe("Rule (local replace)", () => {
    it("replaces the screen and, with sync, sends the list and makes it the base", () => {
      const { m, io } = makeModel({ messages: [user("old")] });
      m.base.hold([{ id: "old" }]);
      localReplace(m, [user("a"), user("b")], true);
      expect(idsOf(m.messages)).toEqual(["a", "b"]);
      expect(io.sent).toEqual([{ type: "cf_agent_chat_messages", messages: [user("a"), user("b")] }]);
      expect([...m.base.known]).toEqual(["a", "b"]);
    });

    it("without sync sends nothing; a read that left before is dropped either way", () => {
      const { m, io } = makeModel({ messages: [user("old")] });
      const read = m.base.read(false);
      localReplace(m, [user("a")], false);
      readAnswered(m, read, [user("stored")]);
      expect(io.sent).toEqual([]);
      expect(idsOf(m.messages)).toEqual(["a"]);
    });
  });

  describe("Rule (server-owned history, issue 33)", () => {
    it("a connect-time transcript without a version (Think) makes setMessages change the screen only, with one warning", () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      const { m, io } = makeModel({ messages: [] as UIMessage[] });
      applySnapshot(m, [user("u1")], true);
      expect(m.base.serverOwned).toBe(true);
      localReplace(m, [user("a")], true);
      localReplace(m, [user("b")], true);
      expect(io.sent).toEqual([]);
      expect(idsOf(m.messages)).toEqual(["b"]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toContain("Think");
      warn.mockRestore();
    });

    it("a versioned connect frame (the ordered server half) or a plain broadcast leaves the server writable", () => {
      const ordered = makeModel({ messages: [] as UIMessage[] });
      applySnapshot(ordered.m, [user("u1")], true, 1);
      const broadcast = makeModel({ messages: [] as UIMessage[] });
      applySnapshot(broadcast.m, [user("u1")], false);
      for (const { m, io } of [ordered, broadcast]) {
        expect(m.base.serverOwned).toBe(false);
        localReplace(m, [user("a")], true);
        expect(io.sent).toEqual([{ type: "cf_agent_chat_messages", messages: [user("a")] }]);
      }
    });
  });
});
