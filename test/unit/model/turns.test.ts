import { describe, expect, it } from "vitest";
import { Turns } from "../../../src/core/model/turns";
import { response } from "../../support/model-harness";

/** What `admit` let through: each frame's `seq`, or "complete" for a replay's end, "done" for the end. */
const seqs = (admitted: Array<{ seq: number | undefined; replayComplete: boolean; done: boolean }>) =>
  admitted.map((frame) => (frame.replayComplete ? "complete" : frame.done ? "done" : frame.seq));

describe("Turns", () => {
  describe("Rule (repeated replay, #1733)", () => {
    it("drops replayed chunks the stream already delivered since the transport's ACK", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 1 }))).toBe(false);
      // A second ACK on the same socket replays the buffer again.
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(true);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 1 }))).toBe(true);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 2 }))).toBe(false);
    });

    it("starts over after a new transport ACK, and after the stream's end", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      streams.isRepeatedReplay(response("r", { replay: true, seq: 3 }));
      streams.resumeAcked("r");
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { done: true }))).toBe(false);
      expect(streams.get("r")!.delivered).toBeNull();
    });

    it("leaves continuation replays, live chunks and streams it never ACKed alone", () => {
      const streams = new Turns();
      expect(streams.isRepeatedReplay(response("x", { replay: true, seq: 0 }))).toBe(false);
      streams.resumeAcked("r");
      streams.isRepeatedReplay(response("r", { replay: true, seq: 5 }));
      expect(streams.isRepeatedReplay(response("r", { replay: true, continuation: true, seq: 1 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { seq: 1 }))).toBe(false);
    });
  });

  describe("Rule (live chunk before its replay)", () => {
    it("holds a live chunk that comes after the transport's ACK and before the replay, and drops it when the replay carried it", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      expect(streams.admit(response("r", { seq: 4 }))).toEqual([]);
      for (const seq of [0, 1, 2, 3, 4]) expect(seqs(streams.admit(response("r", { replay: true, seq })))).toEqual([seq]);
      expect(seqs(streams.admit(response("r", { replay: true, replayComplete: true })))).toEqual(["complete"]);
      expect(seqs(streams.admit(response("r", { seq: 5 })))).toEqual([5]);
    });

    it("holds nothing once a replay that carried nothing has completed", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      expect(seqs(streams.admit(response("r", { replay: true, replayComplete: true })))).toEqual(["complete"]);
      expect(seqs(streams.admit(response("r", { seq: 0 })))).toEqual([0]);
    });

    it("lets a held chunk the replay did not carry go after the replay completes", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      streams.admit(response("r", { seq: 3 }));
      streams.admit(response("r", { replay: true, seq: 0 }));
      const released = streams.admit(response("r", { replay: true, replayComplete: true }));
      expect(seqs(released)).toEqual(["complete", 3]);
    });

    it("lets held chunks go before the stream's end or a live chunk when no replay comes", () => {
      const streams = new Turns();
      streams.resumeAcked("r");
      streams.admit(response("r", { seq: 2 }));
      expect(seqs(streams.admit(response("r", { done: true })))).toEqual([2, "done"]);
      streams.resumeAcked("r");
      for (let seq = 0; seq < 32; seq++) expect(streams.admit(response("r", { seq }))).toEqual([]);
      expect(streams.admit(response("r", { seq: 32 }))).toHaveLength(33);
    });

    it("leaves streams it never ACKed, unsequenced chunks and continuations alone", () => {
      const streams = new Turns();
      expect(streams.admit(response("x", { seq: 1 }))).toHaveLength(1);
      streams.resumeAcked("r");
      expect(streams.admit(response("r", {}))).toHaveLength(1);
      expect(streams.admit(response("r", { seq: 1, continuation: true }))).toHaveLength(1);
    });
  });

  describe("Rule (end of stream)", () => {
    it("reads back in any case when a clear of this client's interrupted the turn and it ended aborted or without outcome", () => {
      for (const outcome of ["aborted", undefined] as const) {
        const streams = new Turns();
        streams.at("r").clear = true;
        expect(streams.readBackAtEnd(response("r", { done: true, outcome }), 0)).toBe("always");
        expect(streams.get("r")!.clear).toBe(false);
      }
      const completed = new Turns();
      completed.at("r").clear = true;
      expect(completed.readBackAtEnd(response("r", { done: true, outcome: "completed" }), 0)).toBe("none");
    });

    it("reads back (resync) a stream that ended with nothing replayed since this client's ACK", () => {
      const streams = new Turns();
      streams.selfAcked("r");
      expect(streams.readBackAtEnd(response("r", { done: true, replay: true }), 0)).toBe("resync");
      expect(streams.readBackAtEnd(response("r", { done: true }), 0)).toBe("none");
    });

    it("reads back every stopped turn: before its reply started here, after, or one the server completed anyway (issue 21, 2)", () => {
      const before = new Turns();
      before.stopping(["r"]);
      expect(before.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("resync");
      const after = new Turns();
      after.at("r").reply = { id: "a", unnamed: false };
      after.stopping(["r"]);
      expect(after.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("resync");
      const unstopped = new Turns();
      unstopped.at("r").reply = { id: "a", unnamed: false };
      expect(unstopped.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("none");
      const completed = new Turns();
      completed.at("r").reply = { id: "a", unnamed: false };
      completed.stopping(["r"]);
      expect(completed.readBackAtEnd(response("r", { done: true, outcome: "completed" }), 0)).toBe("resync");
    });

    it("Rule (a raced request reads back): a transcript frame while this client's request was out, or another of its requests open as it went out", () => {
      const quiet = new Turns();
      quiet.wentOut("r", 3, false);
      expect(quiet.readBackAtEnd(response("r", { done: true }), 3)).toBe("none");
      const framed = new Turns();
      framed.wentOut("r", 3, false);
      expect(framed.readBackAtEnd(response("r", { done: true }), 4)).toBe("resync");
      expect(framed.readBackAtEnd(response("r", { done: true }), 5)).toBe("none");
      const overlapping = new Turns();
      overlapping.wentOut("r", 3, true);
      expect(overlapping.readBackAtEnd(response("r", { done: true }), 3)).toBe("resync");
    });

    it("closes the turn's books, and reads nothing back for a request it never saw", () => {
      const streams = new Turns();
      expect(streams.readBackAtEnd(response("unknown", { done: true }), 0)).toBe("none");
      streams.selfAcked("r");
      streams.stopping(["r"]);
      Object.assign(streams.at("r"), { reply: { id: "a", unnamed: false }, rebuilds: true, opened: new Set(["t"]), shown: "a" });
      streams.readBackAtEnd(response("r", { done: true }), 0);
      const turn = streams.get("r")!;
      expect([turn.replay.kind, turn.reply, turn.rebuilds, turn.opened, turn.follow.kind, turn.shown, turn.unreplayed]).toEqual([
        "none",
        null,
        false,
        null,
        "none",
        null,
        false
      ]);
    });
  });

  describe("Rule (turn end, once)", () => {
    it("reports a done once per request", () => {
      const streams = new Turns();
      const done = response("r", { done: true, outcome: "completed", messageIds: ["u"] });
      expect(streams.turnEnd(done)).toEqual({ requestId: "r", messageIds: ["u"], outcome: "completed", replay: false });
      expect(streams.turnEnd(done)).toBeUndefined();
    });

    it("names the error of an error frame that came before the done", () => {
      const streams = new Turns();
      expect(streams.turnEnd(response("r", { error: true, body: "boom" }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true }))).toEqual({ requestId: "r", outcome: "error", error: "boom", replay: false });
    });

    it("does not end a turn that goes on recovering, nor a live chunk", () => {
      const streams = new Turns();
      expect(streams.turnEnd(response("r", { chunk: { type: "text-delta" } }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true, outcome: "recovering" }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true, outcome: "completed" }))?.outcome).toBe("completed");
    });

    it("remembers reported ends across a reset", () => {
      const streams = new Turns();
      streams.turnEnd(response("r", { done: true }));
      streams.reset();
      expect(streams.turnEnd(response("r", { done: true, replay: true }))).toBeUndefined();
    });
  });

  describe("Rule (held and recovering turns, #2195 #1620)", () => {
    it("a terminal frame of the held turn ends the hold", () => {
      const streams = new Turns();
      streams.heldTurn = "r";
      streams.noteResponse(response("other", { done: true, outcome: "skipped" }));
      streams.noteResponse(response("other", { replay: true, chunk: {} }));
      expect(streams.heldTurn).toBe("r");
      expect(streams.holdsTools).toBe(true);
      streams.noteResponse(response("r", { done: true }));
      expect(streams.heldTurn).toBeNull();
      expect(streams.holdsTools).toBe(false);
    });

    it("another request's live chunk or done ends the hold too: the held turn's own done may have gone with a closed socket", () => {
      for (const frame of [response("next", { chunk: { type: "text-delta" } }), response("next", { done: true, outcome: "aborted" })]) {
        const streams = new Turns();
        streams.heldTurn = "r";
        streams.noteResponse(frame);
        expect(streams.heldTurn).toBeNull();
      }
    });

    it("a recovering done starts a recovery that a live frame of another request ends", () => {
      const streams = new Turns();
      streams.noteResponse(response("r", { done: true, outcome: "recovering" }));
      expect(streams.recoveringTurn).toBe("r");
      streams.noteResponse(response("x", { replay: true }));
      streams.noteResponse(response("x", { done: true, outcome: "skipped" }));
      streams.noteResponse(response("r", { chunk: {} }));
      expect(streams.recoveringTurn).toBe("r");
      streams.noteResponse(response("next", { chunk: {} }));
      expect(streams.recoveringTurn).toBeNull();
    });
  });

  it("a socket close forgets the ACKs this client sent itself, and cuts the turns it followed as its own", () => {
    const streams = new Turns();
    streams.selfAcked("r");
    streams.followed("mine", "request");
    streams.socketClosed();
    expect([streams.get("r")!.replay.kind, streams.get("r")!.cut, streams.get("mine")!.cut]).toEqual(["none", false, true]);
  });

  it("a reset keeps who follows a turn, its reported end, its replay position, and its cut", () => {
    const streams = new Turns();
    streams.followed("r", "request");
    Object.assign(streams.at("r"), { reported: true, delivered: 4, reply: { id: "a", unnamed: false }, cut: true });
    streams.selfAcked("r");
    streams.endedReplies.add("a");
    streams.deferredEnds.push({ requestId: "r", outcome: "completed", replay: false });
    streams.reset();
    expect(streams.get("r")).toMatchObject({ follow: { kind: "chat" }, reported: true, delivered: 4, cut: true, reply: null, replay: { kind: "none" }, unreplayed: false });
    expect([streams.endedReplies.size, streams.deferredEnds.length]).toEqual([0, 0]);
  });

  it("Rule (a clear's interrupted turns): a reset by a clear keeps what each turn it interrupted may still store, and marks its end to read back", () => {
    const turns = new Turns();
    Object.assign(turns.at("watched"), { shown: "s1" });
    Object.assign(turns.at("mine"), { reply: { id: "a", unnamed: true } });
    Object.assign(turns.at("other"), { shown: "s2" });
    turns.reset(["watched", "mine", "new", null]);
    expect(["watched", "mine", "other", "new"].map((id) => [turns.get(id)?.clear, turns.get(id)?.reply, turns.get(id)?.shown])).toEqual([
      [true, null, "s1"],
      [true, { id: "a", unnamed: false }, null],
      [false, null, null],
      [true, null, null]
    ]);
  });

  describe("who follows a turn", () => {
    it("the AI SDK follows a request from its start; a stop keeps it this client's until its end, whose read-back stays owed", () => {
      const turns = new Turns();
      turns.followed("r", "request");
      expect([turns.isLocal("r"), turns.isRunning("r"), turns.active]).toEqual([true, true, "r"]);
      turns.stopping(turns.local);
      expect([turns.isLocal("r"), turns.isRunning("r"), (turns.get("r")!.follow.kind === "stopped")]).toEqual([true, false, true]);
      turns.ownEnded("r");
      expect([turns.isLocal("r"), (turns.get("r")!.follow.kind === "stopped"), turns.active]).toEqual([false, true, null]);
      expect(turns.readBackAtEnd(response("r", { done: true }), 0)).toBe("resync");
      expect((turns.get("r")!.follow.kind === "stopped")).toBe(false);
    });

    it("a continuation is followed but is not the turn a stop cancels; a stream let go with a cancel is stopped", () => {
      const turns = new Turns();
      turns.followed("c", "continuation");
      expect([turns.isLocal("c"), turns.active]).toEqual([true, null]);
      turns.released("c", true);
      expect(turns.get("c")!.follow).toEqual({ kind: "stopped", own: true });
      turns.followed("r", "resume");
      turns.released("r", false);
      expect([turns.isLocal("r"), turns.get("r")!.follow.kind]).toEqual([false, "none"]);
    });

    it("Rule (a cut turn found idle is read back) and rule (a cut is not a failure): a cut turn's end is its own", () => {
      const turns = new Turns();
      turns.followed("r", "request");
      turns.socketClosed();
      turns.released("r", false);
      expect(turns.cutTurnEnded(response("r", { chunk: {} }), false)).toBe(false);
      expect(turns.cutTurnEnded(response("r", { done: true }), false)).toBe(true);
      turns.followed("q", "request");
      turns.socketClosed();
      expect([turns.foundIdle(), turns.foundIdle()]).toEqual([true, false]);
      const error = new Error("WebSocket closed mid-stream");
      turns.cutError = error;
      expect([turns.isCut(error), turns.isCut(new Error("other"))]).toEqual([true, false]);
    });
  });

  it("forgets the oldest records past 500", () => {
    const streams = new Turns();
    for (let i = 0; i <= 500; i++) streams.at(`r${i}`);
    expect(streams.get("r0")).toBeUndefined();
    expect(streams.get("r500")).toBeDefined();
  });
});
