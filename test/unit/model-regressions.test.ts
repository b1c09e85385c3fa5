/**
 * Races the chaos suite or the demo check found, replayed against the model
 * alone (frame orderings too rare to produce on demand against the real agent).
 */
import { describe, expect, it } from "vitest";
import { onResumeNone, onStreamResuming, socketOpened } from "../../src/core/model/resume-rules";
import { modelWithPorts } from "../support/model-ports";

describe("Rule (a declined offer is ACKed once the probe finds nothing)", () => {
  it("an offer onConnect made before the reconnect probe left is ACKed when that probe answers idle (chaos: server restart)", () => {
    const { m, sent } = modelWithPorts();
    socketOpened(m);
    m.link.sawClose = true;
    expect(socketOpened(m)).toBe("reconnect-and-read");
    // The probe waits (the chat is busy); the server offers its interrupted turn and parks the socket.
    onStreamResuming(m, "interrupted", undefined);
    expect(sent).toEqual([]);
    // The probe goes later and finds nothing: the stream ended, but the socket is still parked.
    onResumeNone(m, "idle", "probe-1");
    expect(sent).toEqual([{ type: "cf_agent_stream_resume_ack", id: "interrupted" }]);
    // Once: a second answer sends nothing more.
    onResumeNone(m, "idle", "probe-2");
    expect(sent).toHaveLength(1);
  });

  it("an offer the probe's answer takes is not ACKed twice", () => {
    const { m, sent, transport } = modelWithPorts();
    socketOpened(m);
    m.link.sawClose = true;
    socketOpened(m);
    onStreamResuming(m, "running", undefined);
    // The probe's answer offers the same stream; the transport's waiting probe takes it (and ACKs it itself).
    transport.awaiting = true;
    transport.handleStreamResuming = () => true;
    onStreamResuming(m, "running", "probe-1");
    onResumeNone(m, "idle", "probe-1");
    expect(sent).toEqual([]);
  });
});
