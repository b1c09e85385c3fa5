import { describe, expect, it } from "vitest";
import {
  type Continuation,
  attached,
  idle,
  isRunning,
  isStoppedTurn,
  launched,
  observedEarly,
  pendingNamed,
  requestIdOf,
  requested,
  settled,
  stoppedBeforeStart
} from "../../../src/core/model/continuation";

const cancel: Continuation = { kind: "cancel-on-start", probeId: "p", requestId: null };

describe("the continuation", () => {
  it("Rule (requested): asks once; a new request after a stop's pending cancel schedules afresh", () => {
    const scheduled = requested(idle);
    expect(scheduled.kind).toBe("scheduled");
    expect(requested(scheduled)).toBe(scheduled);
    const probing = launched(scheduled);
    expect(requested(probing)).toBe(probing);
    expect(requested(cancel).kind).toBe("scheduled");
  });

  it("Rule (launched): only a scheduled continuation starts its probe, keeping its token", () => {
    const scheduled = requested(idle) as Extract<Continuation, { kind: "scheduled" }>;
    expect(launched(scheduled)).toEqual({ kind: "probing", token: scheduled.token, requestId: null });
    expect(launched(idle)).toBe(idle);
  });

  it("Rule (attached): the offer the transport took while probing is the continuation", () => {
    const probing = launched(requested(idle));
    expect(attached(probing, "r")).toMatchObject({ kind: "attached", requestId: "r" });
    const scheduled = requested(idle);
    expect(attached(scheduled, "r")).toBe(scheduled);
  });

  it("Rule (pending named): a probe learns the pending id; a stopped continuation learns the id to cancel from any probe's answer (issue 22, 3)", () => {
    const probing = launched(requested(idle));
    expect(pendingNamed(probing, "r", undefined)).toMatchObject({ kind: "probing", requestId: "r" });
    expect(pendingNamed(probing, undefined, undefined)).toBe(probing);
    expect(pendingNamed(cancel, "r", "p")).toEqual({ ...cancel, requestId: "r" });
    expect(pendingNamed(cancel, "r", "other")).toEqual({ ...cancel, requestId: "r" });
    expect(pendingNamed(cancel, "r", undefined)).toBe(cancel);
  });

  it("Rule (observed early): an offer before the probe asked is observed, with a new token", () => {
    const scheduled = requested(idle) as Extract<Continuation, { kind: "scheduled" }>;
    const observed = observedEarly(scheduled, "r");
    expect(observed).toMatchObject({ kind: "observed", requestId: "r" });
    expect((observed as { token: number }).token).not.toBe(scheduled.token);
    expect(observedEarly(idle, "r")).toBe(idle);
  });

  it("Rule (settled): the resume that launched a continuation ends only that one", () => {
    const scheduled = requested(idle) as Extract<Continuation, { kind: "scheduled" }>;
    const probing = launched(scheduled);
    expect(settled(probing, scheduled.token)).toBe(idle);
    const newer = observedEarly(probing, "r");
    expect(settled(newer, scheduled.token)).toBe(newer);
    expect(settled(cancel, scheduled.token)).toBe(cancel);
  });

  it("Rule (stop before start): a stop keeps what it must cancel, and cancels the turn that answers its probe", () => {
    const probing = pendingNamed(launched(requested(idle)), "r", undefined);
    const stopped = stoppedBeforeStart(probing, "p");
    expect(stopped).toEqual({ kind: "cancel-on-start", probeId: "p", requestId: "r" });
    expect(isStoppedTurn(stopped, "r", undefined, true)).toBe(true);
    expect(isStoppedTurn(stopped, "x", "p", false)).toBe(false);
    const unnamed = stoppedBeforeStart(requested(idle), "p");
    expect(isStoppedTurn(unnamed, "x", "p", false)).toBe(true);
    expect(isStoppedTurn(unnamed, "x", "p", true)).toBe(false);
    // The launch's probe may answer after the stop's own (issue 22, 3); an offer no probe asked for is not it.
    expect(isStoppedTurn(unnamed, "x", "q", false)).toBe(true);
    expect(isStoppedTurn(unnamed, "x", undefined, false)).toBe(false);
    expect(isStoppedTurn(idle, "x", "p", false)).toBe(false);
  });

  it("is running from scheduled to observed; idle and cancel-on-start are not", () => {
    const scheduled = requested(idle);
    expect([idle, scheduled, launched(scheduled), cancel].map(isRunning)).toEqual([false, true, true, false]);
    expect(requestIdOf(scheduled)).toBeNull();
    expect(requestIdOf(attached(launched(scheduled), "r"))).toBe("r");
  });
});
