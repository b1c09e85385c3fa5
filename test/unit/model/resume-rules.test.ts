import { describe, expect, it } from "vitest";
import { type Continuation, launched, requested, stoppedBeforeStart } from "../../../src/core/model/continuation";
import { cancelHandshake, onPending, onResumeNone, onStreamResuming, reconnectProbe, socketClosed, socketOpened } from "../../../src/core/model/resume-rules";
import { awaitHandshake, makeModel } from "../../support/model-harness";

const probing = (): Continuation => launched(requested({ kind: "idle" }));

describe("resume rules", () => {
  it("a pending frame names the turn a probing or stopped continuation waits for", () => {
    const { m, io } = makeModel();
    m.continuation = probing();
    awaitHandshake(m, "p", true);
    onPending(m, "r", undefined);
    expect(m.continuation).toMatchObject({ kind: "probing", requestId: "r" });
    // The waiting handshake waits longer.
    expect([io.handshakes, m.handshake?.probeId]).toEqual([["pending"], "p"]);
  });

  it("a pending answer answers the idle probe, and ends held and observed turns other than the pending one", () => {
    const { m } = makeModel({ settings: { resume: false } });
    m.probes.idleId = "idle-1";
    m.turns.heldTurn = "old";
    m.observed.begin("watched", false);
    onPending(m, "r", "idle-1");
    expect([m.probes.idleId, m.turns.heldTurn, m.observed.active]).toEqual([null, null, false]);
    const same = makeModel();
    same.m.turns.heldTurn = "r";
    onPending(same.m, "r", undefined);
    onPending(same.m, undefined, undefined);
    expect(same.m.turns.heldTurn).toBe("r");
  });

  describe("Rule (idle proves nothing runs, #1914)", () => {
    it("an idle answer to this client's probe ends the observed and held turns", () => {
      const { m, io } = makeModel();
      awaitHandshake(m, "p1");
      m.observed.begin("x", false);
      m.turns.heldTurn = "x";
      onResumeNone(m, "idle", "p1");
      expect([m.observed.active, m.turns.heldTurn, io.flagsValue.serverStreaming]).toEqual([false, null, false]);
      expect([io.handshakes, m.handshake]).toEqual([["none"], null]);
      // Its end never came here: what it stored is read back (the demo's agent going down mid-reply).
      expect(io.reads).toMatchObject([{ always: false }]);
    });

    it("the same answer to the idle probe sent outside the transport counts too", () => {
      const { m } = makeModel();
      m.probes.idleId = "p2";
      m.turns.heldTurn = "x";
      onResumeNone(m, "idle", "p2");
      expect([m.probes.idleId, m.turns.heldTurn]).toEqual([null, null]);
    });

    it("another reason, an unmatched probe, or no probe id proves nothing", () => {
      for (const [reason, probeId, awaiting] of [
        ["continuation-owned", "p1", true],
        ["idle", "p1", false],
        ["idle", undefined, true]
      ] as const) {
        const { m } = makeModel();
        if (awaiting) awaitHandshake(m, "p1");
        m.turns.heldTurn = "x";
        onResumeNone(m, reason, probeId);
        expect(m.turns.heldTurn).toBe("x");
      }
    });

    it("Rule (a let-go probe's answer still counts): an idle answer to a probe this client let go ends the observed and held turns, once", () => {
      const { m, io } = makeModel();
      awaitHandshake(m, "p1");
      cancelHandshake(m);
      expect([io.handshakes, m.probes.letGo]).toEqual([["none"], "p1"]);
      m.observed.begin("x", false);
      m.turns.heldTurn = "x";
      onResumeNone(m, "idle", "p1");
      expect([m.observed.active, m.turns.heldTurn, m.probes.letGo]).toEqual([false, null, null]);
      const closed = makeModel();
      awaitHandshake(closed.m, "p1");
      cancelHandshake(closed.m);
      socketClosed(closed.m);
      closed.m.turns.heldTurn = "x";
      onResumeNone(closed.m, "idle", "p1");
      expect(closed.m.turns.heldTurn).toBe("x");
    });

    it("ends a stopped continuation's wait when its own probe is answered", () => {
      const { m } = makeModel();
      m.continuation = stoppedBeforeStart(probing(), "p");
      onResumeNone(m, "continuation-owned", "other");
      expect(m.continuation.kind).toBe("cancel-on-start");
      onResumeNone(m, "idle", "p");
      expect(m.continuation.kind).toBe("idle");
    });
  });

  describe("stream offers (onStreamResuming)", () => {
    it("Rule (the handshake takes the offer): the continuation attaches; the AI SDK renders it and the ACK goes out", () => {
      const { m, io } = makeModel();
      awaitHandshake(m, "p", true);
      m.continuation = probing();
      onStreamResuming(m, "r", "p");
      expect(m.continuation).toMatchObject({ kind: "attached", requestId: "r" });
      expect(io.handshakes).toEqual(["offer:r"]);
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "r" }]);
      expect([m.handshake, m.turns.get("r")?.follow, m.turns.get("r")?.replay.kind]).toEqual([null, { kind: "chat", via: "continuation" }, "resumed"]);
    });

    it("otherwise this client ACKs it itself once and observes it", () => {
      const { m, io } = makeModel();
      onStreamResuming(m, "x", undefined);
      onStreamResuming(m, "x", undefined);
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "x" }]);
      expect([m.observed.streamId, m.turns.active, io.flagsValue.serverStreaming]).toEqual(["x", "x", true]);
      expect(m.turns.get("x")).toMatchObject({ replay: { kind: "self" }, unreplayed: true, rebuilds: true });
    });

    it("an offer before the continuation's probe asked is observed as the continuation", () => {
      const { m } = makeModel();
      m.continuation = requested(m.continuation);
      onStreamResuming(m, "c", undefined);
      expect(m.continuation).toMatchObject({ kind: "observed", requestId: "c" });
      expect(m.observed.message?.continuation).toBe(true);
    });

    it("an offer of the stream it observes starts its message again, leaving the old shell to the empty-reply rule", () => {
      const { m } = makeModel();
      m.observed.begin("x", false).apply({ type: "start", messageId: "b1" });
      onStreamResuming(m, "x", undefined);
      expect(m.observed.streamId).toBe("x");
      expect(m.observed.message?.id).not.toBe("b1");
      expect(m.turns.endedReplies.has("b1")).toBe(true);
    });

    it("without resume, a live stream is held, not ACKed", () => {
      const { m, io } = makeModel({ settings: { resume: false } });
      onStreamResuming(m, "x", undefined);
      expect([m.turns.heldTurn, io.sent.length]).toEqual(["x", 0]);
    });

    it("leaves the offer to the reconnect probe that is about to go out", () => {
      const { m, io } = makeModel();
      m.probes.reconnect = true;
      onStreamResuming(m, "x", undefined);
      expect([io.sent.length, m.observed.active]).toEqual([0, false]);
    });

    it("Rule (stop before start): the turn a stopped continuation waits for is cancelled, never ACKed", () => {
      const { m, io } = makeModel();
      m.continuation = stoppedBeforeStart(probing(), "p");
      onStreamResuming(m, "c", "p");
      expect(io.sent).toEqual([{ type: "cf_agent_chat_request_cancel", id: "c" }]);
      expect(m.continuation.kind).toBe("idle");
    });

    it("an offer of another request ends the held turn and the observed one", () => {
      const { m } = makeModel();
      m.turns.heldTurn = "old";
      m.observed.begin("watched", false).apply({ type: "start", messageId: "b1" });
      awaitHandshake(m);
      onStreamResuming(m, "new", undefined);
      expect([m.turns.heldTurn, m.observed.active]).toEqual([null, false]);
      expect(m.turns.endedReplies.has("b1")).toBe(true);
    });

    describe("Rule (own request offered)", () => {
      it("ACKs an offer of a request this client streams itself, with resume on or off, once", () => {
        for (const resume of [true, false]) {
          const { m, io, local } = makeModel({ settings: { resume } });
          local.add("mine");
          awaitHandshake(m);
          onStreamResuming(m, "mine", undefined);
          onStreamResuming(m, "mine", undefined);
          expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "mine" }]);
          expect([m.handshake !== null, m.observed.active, m.turns.heldTurn]).toEqual([true, false, null]);
          expect(m.turns.get("mine")).toMatchObject({ replay: { kind: "self" }, unreplayed: true });
        }
      });

      it("leaves one it stopped, one the transport ACKed, and the waiting handshake's answer alone", () => {
        const stopped = makeModel();
        stopped.local.add("mine");
        stopped.m.turns.stopping(["mine"]);
        onStreamResuming(stopped.m, "mine", undefined);
        const acked = makeModel();
        acked.local.add("mine");
        acked.m.turns.resumeAcked("mine");
        onStreamResuming(acked.m, "mine", undefined);
        const probed = makeModel();
        probed.local.add("mine");
        awaitHandshake(probed.m, "p1");
        onStreamResuming(probed.m, "mine", "p1");
        expect([stopped.io.sent, acked.io.sent]).toEqual([[], []]);
        // The handshake takes its own answer (rule: the handshake takes the offer): the ACK is the resume's.
        expect([probed.m.handshake, probed.m.turns.get("mine")?.replay.kind]).toEqual([null, "resumed"]);
      });

      it("ACKs one the idle probe's answer offers: that answer parked the socket too (seed 68999617)", () => {
        const { m, io, local } = makeModel({ settings: { resume: false } });
        local.add("mine");
        m.probes.idleId = "idle-1";
        onStreamResuming(m, "mine", "idle-1");
        expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "mine" }]);
        expect([m.probes.idleId, m.turns.heldTurn, m.turns.get("mine")?.replay.kind]).toEqual([null, null, "self"]);
      });
    });
  });

  describe("socket close", () => {
    it("holds the turn the transport followed and unprotects the live reply", () => {
      const { m } = makeModel();
      m.turns.active = "r";
      m.placement.protect("a1", false);
      m.turns.selfAcked("x");
      socketClosed(m);
      expect([m.link.sawClose, m.turns.heldTurn, m.placement.protectedId, m.turns.get("x")?.replay.kind]).toEqual([true, "r", undefined, "none"]);
    });

    it("Rule (a buffered send went out with its socket): forgets the sends the transport buffered before that socket opened", () => {
      const { m } = makeModel();
      m.intents.buffered.add("u1");
      socketClosed(m);
      expect([...m.intents.buffered]).toEqual([]);
    });

    it("without resume, asks again an idle probe the close cut off", () => {
      const { m } = makeModel({ settings: { resume: false } });
      m.probes.idleId = "idle-1";
      socketClosed(m);
      expect([m.probes.idleId, m.probes.idleNeeded]).toEqual([null, true]);
    });

    it("without resume, ends the observed turn and owes one idle probe", () => {
      const { m } = makeModel({ settings: { resume: false } });
      m.observed.begin("x", false);
      socketClosed(m);
      expect([m.observed.active, m.probes.idleNeeded, m.turns.heldTurn]).toEqual([false, true, "x"]);
    });
  });

  describe("Rule (one probe per reconnect, #1837)", () => {
    it("asks for the AI SDK resume once the chat settled, once", () => {
      const { m, io } = makeModel();
      m.probes.reconnect = true;
      io.statusValue = "streaming";
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
      expect(m.probes.reconnect).toBe(true);
      io.statusValue = "ready";
      io.resumingValue = true;
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
      io.resumingValue = false;
      expect(reconnectProbe(m, () => "p")).toBe("resume");
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
    });

    it("re-sends a handshake that crossed the disconnect instead of a new resume", () => {
      const { m, io } = makeModel();
      m.probes.reconnect = true;
      awaitHandshake(m, "p0");
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
      expect([m.probes.reconnect, io.handshakes]).toEqual([false, ["retry"]]);
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_request", probeId: "p0" }]);
    });

    it("waits for the socket, and for a continuation of this client's that is not observed", () => {
      const { m } = makeModel({ open: false });
      m.probes.reconnect = true;
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
      m.link.open = true;
      m.continuation = probing();
      expect(reconnectProbe(m, () => "p")).toBeUndefined();
      m.continuation = { kind: "observed", token: 1, requestId: "c" };
      expect(reconnectProbe(m, () => "p")).toBe("resume");
    });

    it("without resume waits for this client's own request to settle before the idle probe", () => {
      const { m, io } = makeModel({ settings: { resume: false } });
      m.probes.reconnect = true;
      m.probes.idleNeeded = true;
      io.statusValue = "submitted";
      expect(reconnectProbe(m, () => "idle-1")).toBeUndefined();
      expect([io.sent, m.probes.reconnect]).toEqual([[], true]);
    });

    it("without resume sends the one idle probe it owes", () => {
      const { m, io } = makeModel({ settings: { resume: false } });
      m.probes.reconnect = true;
      m.probes.idleNeeded = true;
      expect(reconnectProbe(m, () => "idle-1")).toBeUndefined();
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_request", probeId: "idle-1" }]);
      expect([m.probes.reconnect, m.probes.idleNeeded, m.probes.idleId]).toEqual([false, false, "idle-1"]);
    });
  });

  describe("Rule (a declined offer is ACKed once the probe finds nothing)", () => {
    it("an offer onConnect made before the reconnect probe left is ACKed when that probe answers idle (chaos: server restart)", () => {
      const { m, io } = makeModel({ open: false });
      socketOpened(m, 0);
      m.link.sawClose = true;
      expect(socketOpened(m, 0)).toBe("reconnect-and-read");
      // The probe waits (the chat is busy); the server offers its interrupted turn and parks the socket.
      onStreamResuming(m, "interrupted", undefined);
      expect(io.sent).toEqual([]);
      // The probe goes later and finds nothing: the stream ended, but the socket is still parked.
      onResumeNone(m, "idle", "probe-1");
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "interrupted" }]);
      // Once: a second answer sends nothing more.
      onResumeNone(m, "idle", "probe-2");
      expect(io.sent).toHaveLength(1);
    });

    it("an offer the probe's answer takes is not ACKed twice", () => {
      const { m, io } = makeModel({ open: false });
      socketOpened(m, 0);
      m.link.sawClose = true;
      socketOpened(m, 0);
      onStreamResuming(m, "running", undefined);
      // The probe's answer offers the same stream; the waiting handshake takes it (its ACK is the only one).
      awaitHandshake(m, "probe-1");
      onStreamResuming(m, "running", "probe-1");
      onResumeNone(m, "idle", "probe-1");
      expect(io.sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "running" }]);
    });
  });
});
