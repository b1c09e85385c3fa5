import { describe, expect, it, vi } from "vitest";
import { collapseReplays, droppedTextStart, onResponse, ownTurnFinished } from "../../../src/core/model/response-rules";
import { requested } from "../../../src/core/model/continuation";
import { assistant, idsOf, makeModel, response, textOf, toolCallMessage, user } from "../../support/model-harness";

const start = (messageId: string) => ({ type: "start", messageId });
const delta = (text: string, id = "t") => ({ type: "text-delta", id, delta: text });

describe("response rules", () => {
  describe("a local request's frames", () => {
    it("a start names and protects the reply; the done releases it and closes the books", () => {
      const { m, local } = makeModel({ messages: [user("u1")] });
      local.add("r");
      m.turns.active = "r";
      onResponse(m, response("r", { chunk: start("a1") }));
      expect([m.turns.get("r")?.reply?.id, m.placement.protectedId]).toEqual(["a1", "a1"]);
      m.list.pushMessage(assistant("a1", "hi"));
      expect(onResponse(m, response("r", { done: true, outcome: "completed" }))).toBe("none");
      expect([local.has("r"), m.placement.protectedId, m.turns.active]).toEqual([false, undefined, null]);
      expect(m.turns.endedReplies.has("a1")).toBe(true);
    });

    it("Rule (live reply overlay): the reply's protection ends with its request, also when the transport let go of it before its done", () => {
      const { m, local } = makeModel({ messages: [user("u1")] });
      local.add("r");
      onResponse(m, response("r", { chunk: start("a1") }));
      local.delete("r");
      onResponse(m, response("r", { done: true, outcome: "aborted" }));
      expect(m.placement.protectedId).toBeUndefined();
    });

    it("Rule (end of stream): a stopped reply reads back, with or without parts here (the server stores what it streamed until it took the cancel; issue 21, 2)", () => {
      for (const [parts, expected] of [
        [[], "resync"],
        [["kept"], "resync"]
      ] as const) {
        const { m, local } = makeModel({ messages: [user("u1")] });
        local.add("r");
        onResponse(m, response("r", { chunk: start("a1") }));
        m.list.pushMessage(assistant("a1", ...parts));
        m.turns.stopping(["r"]);
        expect(onResponse(m, response("r", { done: true, outcome: "aborted" }))).toBe(expected);
      }
    });

    it("reports the turn's end once the AI SDK settled it when this client's request is still busy", () => {
      const onTurnEnd = vi.fn();
      const { m, io, local } = makeModel({ settings: { onTurnEnd } });
      local.add("r");
      io.statusValue = "streaming";
      onResponse(m, response("r", { done: true }));
      expect(onTurnEnd).not.toHaveBeenCalled();
      expect(m.turns.deferredEnds).toMatchObject([{ requestId: "r", outcome: "completed" }]);
      onResponse(m, response("other", { done: true, outcome: "skipped" }));
      expect(onTurnEnd).toHaveBeenCalledWith(expect.objectContaining({ requestId: "other", outcome: "skipped" }));
    });

    it("Rule (replay rebuilds, #1733): a replayed start empties the reply it rebuilds to its shell", () => {
      const { m, local } = makeModel({ messages: [user("u1"), assistant("a1", "Hel")] });
      local.add("r");
      onResponse(m, response("r", { chunk: start("a1"), replay: true, seq: 0 }));
      expect(m.messages[1]!.parts).toEqual([]);
      expect(m.turns.rebuilt.has("a1")).toBe(true);
      const running = makeModel({ messages: [user("u1"), assistant("a1", "Hel")] });
      running.local.add("r");
      running.m.continuation = requested(running.m.continuation);
      onResponse(running.m, response("r", { chunk: start("a1"), replay: true, seq: 0 }));
      expect(textOf(running.m.messages[1])).toBe("Hel");
    });

    it("Rule (unsequenced replay, #1951): a continuation replayed without seq marks the last reply for collapsing", () => {
      const { m, local } = makeModel({ messages: [user("u1"), assistant("a1", "x")] });
      local.add("r");
      onResponse(m, response("r", { chunk: delta("x"), replay: true, continuation: true }));
      expect(m.turns.unsequenced.has("a1")).toBe(true);
      onResponse(m, response("r2", { chunk: delta("x"), replay: true, continuation: true, seq: 0 }));
      expect(m.turns.unsequenced.size).toBe(1);
    });

    it("a replayed chunk ends the record's wait for a replay; the end then reads nothing back", () => {
      const { m, local } = makeModel();
      local.add("r");
      m.turns.selfAcked("r");
      onResponse(m, response("r", { chunk: delta("x"), replay: true, seq: 0 }));
      expect(onResponse(m, response("r", { done: true, replay: true }))).toBe("none");
    });
  });

  describe("another request's frames (the observed turn)", () => {
    it("builds the reply from the chunks and merges it as they come", () => {
      const { m, io } = makeModel({ messages: [user("u1")] });
      onResponse(m, response("x", { chunk: start("b1") }));
      onResponse(m, response("x", { chunk: { type: "text-start", id: "t" } }));
      onResponse(m, response("x", { chunk: delta("Hi") }));
      expect(idsOf(m.messages)).toEqual(["u1", "b1"]);
      expect(io.flagsValue.serverStreaming).toBe(true);
      onResponse(m, response("x", { done: true, outcome: "completed" }));
      expect([m.observed.active, io.flagsValue.serverStreaming, m.base.known.has("b1")]).toEqual([false, false, true]);
      expect(textOf(m.messages[1])).toBe("Hi");
    });

    it("another request's frame ends the observed turn (its done may have gone with a closed socket)", () => {
      const { m, local } = makeModel({ messages: [user("u1")] });
      onResponse(m, response("x", { chunk: start("b1") }));
      onResponse(m, response("y", { done: true, outcome: "skipped" }));
      expect(m.observed.streamId).toBe("x");
      local.add("mine");
      onResponse(m, response("mine", { chunk: start("a1") }));
      expect(m.observed.active).toBe(false);
      expect(m.turns.endedReplies.has("b1")).toBe(true);
    });

    it("a stream that ends before a part was seen here shows nothing", () => {
      const { m } = makeModel({ messages: [user("u1")] });
      m.turns.at("x").rebuilds = true;
      onResponse(m, response("x", { done: true, outcome: "aborted" }));
      expect(idsOf(m.messages)).toEqual(["u1"]);
    });

    it("Rule (a request nobody here watches ended): only the books close", () => {
      const { m } = makeModel({ messages: [user("u1")] });
      m.turns.recordApplied("x", 2);
      m.turns.active = "x";
      onResponse(m, response("x", { done: true, outcome: "skipped" }));
      expect([idsOf(m.messages), m.turns.get("x")?.applied, m.turns.active]).toEqual([["u1"], null, null]);
    });

    it("an error frame ends the observed turn", () => {
      const { m, io } = makeModel();
      onResponse(m, response("x", { chunk: start("b1") }));
      onResponse(m, response("x", { error: true, done: true, body: "boom" }));
      expect([m.observed.active, io.flagsValue.serverStreaming]).toEqual([false, false]);
    });

    it("ignores a replay it did not ask for, and skips applied continuation replays but for their start", () => {
      const { m } = makeModel({ messages: [user("u1")] });
      onResponse(m, response("x", { chunk: start("b1"), replay: true }));
      expect(m.observed.active).toBe(false);
      const onData = vi.fn();
      const watching = makeModel({ messages: [user("u1")], settings: { onData } });
      watching.m.turns.recordApplied("x", 1);
      watching.m.observed.begin("x", true);
      onResponse(watching.m, response("x", { chunk: { type: "data-a", data: 1 }, replay: true, continuation: true, seq: 1 }));
      onResponse(watching.m, response("x", { chunk: { type: "data-a", data: 2 }, replay: true, continuation: true, seq: 2 }));
      expect(onData.mock.calls.map(([chunk]) => chunk.data)).toEqual([2]);
    });

    it("warns about a chunk that is not JSON", () => {
      const { m, io } = makeModel();
      onResponse(m, response("x", { body: "{oops" }));
      expect(io.warnings.map((warning) => warning.key)).toEqual(["bad-chunk"]);
    });

    it("notes tool calls streamed in another client's turn", () => {
      const { m } = makeModel();
      onResponse(m, response("x", { chunk: { type: "tool-input-start", toolCallId: "c1", toolName: "ask" } }));
      expect(m.tools.runnable([toolCallMessage("a", "c1")], undefined, true, false)).toEqual([]);
    });
  });

  describe("Rule (recovered text part)", () => {
    it("opens a text part for a delta whose start the server dropped, once", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("a1")] });
      m.placement.pinLast();
      const opened = droppedTextStart(m, response("r", { chunk: delta("lo", "t9"), continuation: true, seq: 4 }));
      expect(opened).toBe("t9");
      expect(droppedTextStart(m, response("r", { chunk: delta("!", "t9"), continuation: true }))).toBeUndefined();
      expect(m.placement.pin?.resumesText).toBe(true);
    });

    it("leaves a delta of a part the stream opened alone", () => {
      const { m } = makeModel();
      droppedTextStart(m, response("r", { chunk: { type: "text-start", id: "t" }, continuation: true }));
      expect(droppedTextStart(m, response("r", { chunk: delta("x"), continuation: true }))).toBeUndefined();
    });
  });

  describe("Rule (own turn folds into the base)", () => {
    it("a reply finished with parts is held by the server, with what came before it, and its sends are confirmed", () => {
      const { m } = makeModel();
      m.intents.unechoed.set("u1", { lacked: false });
      const messages = [user("u1"), assistant("a1", "x"), user("later")];
      ownTurnFinished(m, { message: messages[1]!, messages, isAbort: false, isError: false, isDisconnect: false });
      expect([...m.base.known]).toEqual(["u1", "a1"]);
      expect(m.intents.unechoed.size).toBe(0);
    });

    it("leaves a reply its stream ended without a part to the empty-reply rule (a close may have cut its done)", () => {
      const { m } = makeModel();
      const reply = assistant("a1");
      ownTurnFinished(m, { message: reply, messages: [user("u1"), reply], isAbort: false, isError: true, isDisconnect: false });
      expect(m.turns.endedReplies.has("a1")).toBe(true);
    });

    it("folds nothing for a stopped, failed, cut or empty reply", () => {
      for (const flags of [{ isAbort: true }, { isError: true }, { isDisconnect: true }, {}]) {
        const { m } = makeModel();
        const reply = "isAbort" in flags || "isError" in flags || "isDisconnect" in flags ? assistant("a1", "x") : assistant("a1");
        ownTurnFinished(m, { message: reply, messages: [user("u1"), reply], isAbort: false, isError: false, isDisconnect: false, ...flags });
        expect(m.base.known.size).toBe(0);
      }
    });
  });

  describe("Rule (replayed text collapses, #1733 #1951)", () => {
    it("drops text a replay repeated from the replies it rebuilt, and forgets them once the chat settles", () => {
      const { m } = makeModel({ messages: [user("u1"), assistant("a1", "Hel", "Hello")] });
      m.turns.rebuilt.add("a1");
      collapseReplays(m);
      expect(m.messages[1]!.parts).toEqual([{ type: "text", text: "Hello" }]);
      expect(m.turns.rebuilt.size).toBe(0);
    });

    it("keeps the rebuilt set while this client's request is busy, and collapses an unsequenced reply when it finishes", () => {
      const { m, io } = makeModel({ messages: [assistant("a1", "Hi", "Hi there")] });
      io.statusValue = "streaming";
      m.turns.rebuilt.add("a1");
      collapseReplays(m);
      expect(m.turns.rebuilt.size).toBe(1);
      const unsequenced = makeModel({ messages: [assistant("a1", "Hi", "Hi there")] });
      unsequenced.m.turns.unsequenced.add("a1");
      const message = unsequenced.m.messages[0]!;
      ownTurnFinished(unsequenced.m, { message, messages: [message], isAbort: false, isError: false, isDisconnect: false });
      expect(textOf(unsequenced.m.messages[0])).toBe("Hi there");
      expect(unsequenced.m.turns.unsequenced.size).toBe(0);
    });
  });
});
