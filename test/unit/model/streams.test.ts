import { describe, expect, it } from "vitest";
import { StreamRecords } from "../../../src/core/model/streams";
import { response } from "../../support/model-harness";

/** What `admit` let through: each frame's `seq`, or "complete" for a replay's end. */
const seqs = (admitted: Array<{ frame: { seq: number | undefined; replayComplete: boolean } }>) =>
  admitted.map(({ frame }) => (frame.replayComplete ? "complete" : frame.seq));

describe("StreamRecords", () => {
  describe("Rule (repeated replay, #1733)", () => {
    it("drops replayed chunks the stream already delivered since the transport's ACK", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 1 }))).toBe(false);
      // A second ACK on the same socket replays the buffer again.
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(true);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 1 }))).toBe(true);
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 2 }))).toBe(false);
    });

    it("starts over after a new transport ACK, and after the stream's end", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      streams.isRepeatedReplay(response("r", { replay: true, seq: 3 }));
      streams.transportAcked("r");
      expect(streams.isRepeatedReplay(response("r", { replay: true, seq: 0 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { done: true }))).toBe(false);
      expect(streams.get("r")!.seq).toBeUndefined();
    });

    it("leaves continuation replays, live chunks and streams it never ACKed alone", () => {
      const streams = new StreamRecords();
      expect(streams.isRepeatedReplay(response("x", { replay: true, seq: 0 }))).toBe(false);
      streams.transportAcked("r");
      streams.isRepeatedReplay(response("r", { replay: true, seq: 5 }));
      expect(streams.isRepeatedReplay(response("r", { replay: true, continuation: true, seq: 1 }))).toBe(false);
      expect(streams.isRepeatedReplay(response("r", { seq: 1 }))).toBe(false);
    });
  });

  describe("Rule (live chunk before its replay)", () => {
    it("holds a live chunk that comes after the transport's ACK and before the replay, and drops it when the replay carried it", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      expect(streams.admit(response("r", { seq: 4 }), "live 4")).toEqual([]);
      for (const seq of [0, 1, 2, 3, 4]) expect(seqs(streams.admit(response("r", { replay: true, seq }), seq))).toEqual([seq]);
      expect(seqs(streams.admit(response("r", { replay: true, replayComplete: true }), "end"))).toEqual(["complete"]);
      expect(seqs(streams.admit(response("r", { seq: 5 }), "live 5"))).toEqual([5]);
    });

    it("holds nothing once a replay that carried nothing has completed", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      expect(seqs(streams.admit(response("r", { replay: true, replayComplete: true }), "end"))).toEqual(["complete"]);
      expect(seqs(streams.admit(response("r", { seq: 0 }), "live 0"))).toEqual([0]);
    });

    it("lets a held chunk the replay did not carry go after the replay completes, with its raw data", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      streams.admit(response("r", { seq: 3 }), "live 3");
      streams.admit(response("r", { replay: true, seq: 0 }), "replay 0");
      const released = streams.admit(response("r", { replay: true, replayComplete: true }), "end");
      expect(released.map(({ raw }) => raw)).toEqual(["end", "live 3"]);
    });

    it("lets held chunks go before the stream's end or a live chunk when no replay comes", () => {
      const streams = new StreamRecords();
      streams.transportAcked("r");
      streams.admit(response("r", { seq: 2 }), "live 2");
      expect(streams.admit(response("r", { done: true }), "done").map(({ raw }) => raw)).toEqual(["live 2", "done"]);
      streams.transportAcked("r");
      for (let seq = 0; seq < 32; seq++) expect(streams.admit(response("r", { seq }), seq)).toEqual([]);
      expect(streams.admit(response("r", { seq: 32 }), 32)).toHaveLength(33);
    });

    it("leaves streams it never ACKed, unsequenced chunks and continuations alone", () => {
      const streams = new StreamRecords();
      expect(streams.admit(response("x", { seq: 1 }), 1)).toHaveLength(1);
      streams.transportAcked("r");
      expect(streams.admit(response("r", {}), "no seq")).toHaveLength(1);
      expect(streams.admit(response("r", { seq: 1, continuation: true }), "continuation")).toHaveLength(1);
    });
  });

  describe("Rule (end of stream)", () => {
    it("reads back in any case when a clear of this client's interrupted the turn and it ended aborted or without outcome", () => {
      for (const outcome of ["aborted", undefined] as const) {
        const streams = new StreamRecords();
        streams.at("r").interruptedByClear = true;
        expect(streams.readBackAtEnd(response("r", { done: true, outcome }), 0)).toBe("always");
        expect(streams.get("r")!.interruptedByClear).toBeUndefined();
      }
      const completed = new StreamRecords();
      completed.at("r").interruptedByClear = true;
      expect(completed.readBackAtEnd(response("r", { done: true, outcome: "completed" }), 0)).toBe("none");
    });

    it("reads back (resync) a stream that ended with nothing replayed since this client's ACK", () => {
      const streams = new StreamRecords();
      Object.assign(streams.at("r"), { acked: true, unreplayed: true });
      expect(streams.readBackAtEnd(response("r", { done: true, replay: true }), 0)).toBe("resync");
      expect(streams.readBackAtEnd(response("r", { done: true }), 0)).toBe("none");
    });

    it("reads back every stopped turn: before its reply started here, after, or one the server completed anyway (issue 21, 2)", () => {
      const before = new StreamRecords();
      before.stopping(["r"]);
      expect(before.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("resync");
      const after = new StreamRecords();
      after.at("r").replyId = "a";
      after.stopping(["r"]);
      expect(after.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("resync");
      const unstopped = new StreamRecords();
      unstopped.at("r").replyId = "a";
      expect(unstopped.readBackAtEnd(response("r", { done: true, outcome: "aborted" }), 0)).toBe("none");
      const completed = new StreamRecords();
      completed.at("r").replyId = "a";
      completed.stopping(["r"]);
      expect(completed.readBackAtEnd(response("r", { done: true, outcome: "completed" }), 0)).toBe("resync");
    });

    it("Rule (a raced request reads back): a transcript frame while this client's request was out, or another of its requests open as it went out", () => {
      const quiet = new StreamRecords();
      quiet.wentOut("r", 3, false);
      expect(quiet.readBackAtEnd(response("r", { done: true }), 3)).toBe("none");
      const framed = new StreamRecords();
      framed.wentOut("r", 3, false);
      expect(framed.readBackAtEnd(response("r", { done: true }), 4)).toBe("resync");
      expect(framed.readBackAtEnd(response("r", { done: true }), 5)).toBe("none");
      const overlapping = new StreamRecords();
      overlapping.wentOut("r", 3, true);
      expect(overlapping.readBackAtEnd(response("r", { done: true }), 3)).toBe("resync");
    });

    it("closes the record's books, and reads nothing back for a request it never saw", () => {
      const streams = new StreamRecords();
      expect(streams.readBackAtEnd(response("unknown", { done: true }), 0)).toBe("none");
      Object.assign(streams.at("r"), { acked: true, replyId: "a", replayPending: true, openedText: new Set(["t"]) });
      streams.readBackAtEnd(response("r", { done: true }), 0);
      const record = streams.get("r")!;
      expect([record.acked, record.replyId, record.replayPending, record.openedText, record.stopped]).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined
      ]);
    });
  });

  describe("Rule (turn end, once)", () => {
    it("reports a done once per request", () => {
      const streams = new StreamRecords();
      const done = response("r", { done: true, outcome: "completed", messageIds: ["u"] });
      expect(streams.turnEnd(done)).toEqual({ requestId: "r", messageIds: ["u"], outcome: "completed", replay: false });
      expect(streams.turnEnd(done)).toBeUndefined();
    });

    it("names the error of an error frame that came before the done", () => {
      const streams = new StreamRecords();
      expect(streams.turnEnd(response("r", { error: true, body: "boom" }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true }))).toEqual({ requestId: "r", outcome: "error", error: "boom", replay: false });
    });

    it("does not end a turn that goes on recovering, nor a live chunk", () => {
      const streams = new StreamRecords();
      expect(streams.turnEnd(response("r", { chunk: { type: "text-delta" } }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true, outcome: "recovering" }))).toBeUndefined();
      expect(streams.turnEnd(response("r", { done: true, outcome: "completed" }))?.outcome).toBe("completed");
    });

    it("remembers reported ends across a reset", () => {
      const streams = new StreamRecords();
      streams.turnEnd(response("r", { done: true }));
      streams.reset();
      expect(streams.turnEnd(response("r", { done: true, replay: true }))).toBeUndefined();
    });
  });

  describe("Rule (held and recovering turns, #2195 #1620)", () => {
    it("a terminal frame of the held turn ends the hold", () => {
      const streams = new StreamRecords();
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
        const streams = new StreamRecords();
        streams.heldTurn = "r";
        streams.noteResponse(frame);
        expect(streams.heldTurn).toBeNull();
      }
    });

    it("a recovering done starts a recovery that a live frame of another request ends", () => {
      const streams = new StreamRecords();
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

  it("a socket close forgets the ACKs this client sent itself", () => {
    const streams = new StreamRecords();
    streams.at("r").acked = true;
    streams.socketClosed();
    expect(streams.get("r")!.acked).toBe(false);
  });

  it("a reset keeps only reported ends and replay positions", () => {
    const streams = new StreamRecords();
    Object.assign(streams.at("r"), { ended: true, seq: 4, acked: true, replyId: "a" });
    streams.endedReplies.add("a");
    streams.deferredEnds.push({ requestId: "r", outcome: "completed", replay: false });
    streams.reset();
    expect(streams.get("r")).toEqual({ ended: true, seq: 4 });
    expect([streams.endedReplies.size, streams.deferredEnds.length]).toEqual([0, 0]);
  });

  it("forgets the oldest records past 500", () => {
    const streams = new StreamRecords();
    for (let i = 0; i <= 500; i++) streams.at(`r${i}`);
    expect(streams.get("r0")).toBeUndefined();
    expect(streams.get("r500")).toBeDefined();
  });
});
