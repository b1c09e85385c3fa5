import { describe, expect, it } from "vitest";
import { requested } from "../../../src/core/model/continuation";
import { applySnapshot } from "../../../src/core/model/transcript-rules";
import { idsOf, makeModel, user } from "../../support/model-harness";

const entry = (id: string) => ({ message: user(id), options: undefined, settle: () => {} });

/** A chat showing another tab's reply `g1` over the stored transcript `stored` (at a version, or without one). */
function watching(stored: string[], exact: boolean) {
  const model = makeModel();
  applySnapshot(model.m, stored.map((id) => user(id)), true, exact ? 3 : undefined);
  model.m.observed.begin("r1", false).apply({ type: "start", messageId: "g1" });
  if (!stored.includes("g1")) model.m.list.messages.push({ id: "g1", role: "assistant", parts: [{ type: "text", text: "w0" }] });
  return model;
}

describe("ChatModel", () => {
  describe("Rule (the base wins when an observed turn ends, exact sync)", () => {
    it("a message the stored transcript lacks goes once the turn is over; not at a close, nor without versions", () => {
      expect(idsOf((({ m }) => (m.dropObserved(false), m.messages))(watching(["u1"], true)))).toEqual(["u1"]);
      expect(idsOf((({ m }) => (m.dropObserved(), m.messages))(watching(["u1"], true)))).toEqual(["u1", "g1"]);
      expect(idsOf((({ m }) => (m.dropObserved(false), m.messages))(watching(["u1"], false)))).toEqual(["u1", "g1"]);
    });

    it("one the stored transcript holds stays", () => {
      const { m } = watching(["u1", "g1"], true);
      m.dropObserved(false);
      expect(idsOf(m.messages)).toEqual(["u1", "g1"]);
    });
  });

  describe("Rule (queued sends)", () => {
    it("sends at once on an open, loaded, quiet chat", () => {
      expect(makeModel().m.mustQueue()).toBe(false);
    });

    it("queues while the socket is down, the first read is out, older sends wait or go, another turn streams, or a resume owns the chat", () => {
      const cases: Array<(model: ReturnType<typeof makeModel>) => void> = [
        ({ m }) => (m.link.open = false),
        ({ io }) => (io.loadingValue = true),
        ({ m }) => m.intents.queued.push(entry("q")),
        ({ m }) => (m.intents.sending = true),
        ({ m }) => m.observed.begin("x", false),
        ({ io }) => (io.resumingValue = true)
      ];
      for (const arrange of cases) {
        const model = makeModel();
        arrange(model);
        expect(model.m.mustQueue()).toBe(true);
      }
    });
  });

  it("lets the next queued send go only once the chat settled", () => {
    const { m, io } = makeModel();
    const first = entry("q1");
    m.intents.queued.push(first, entry("q2"));
    io.statusValue = "streaming";
    expect(m.nextQueued()).toBeUndefined();
    io.statusValue = "ready";
    m.continuation = requested(m.continuation);
    expect(m.nextQueued()).toBeUndefined();
    m.continuation = { kind: "idle" };
    expect(m.nextQueued()).toBe(first);
    m.intents.sending = true;
    expect(m.nextQueued()).toBeUndefined();
    expect(m.intents.queued).toHaveLength(1);
  });

  it("ending the observed turn after a close holds its turn for client tools and ends an observed continuation", () => {
    const { m, io } = makeModel();
    m.observed.begin("x", true);
    m.continuation = { kind: "observed", token: 1, requestId: "x" };
    m.flags({ serverStreaming: true });
    m.dropObserved();
    expect([m.turns.heldTurn, m.continuation.kind, io.flagsValue.serverStreaming]).toEqual(["x", "idle", false]);
    const quiet = makeModel();
    quiet.m.observed.begin("x", false);
    quiet.m.dropObserved(false);
    expect(quiet.m.turns.heldTurn).toBeNull();
  });

  it("ending the observed turn leaves its reply to the empty-reply rule", () => {
    const { m } = makeModel();
    const message = m.observed.begin("x", false);
    message.apply({ type: "start", messageId: "b1" });
    m.dropObserved(false);
    expect(m.turns.endedReplies.has("b1")).toBe(true);
  });

  it("publishes isToolContinuation from the continuation", () => {
    const { m, io } = makeModel();
    m.continuation = requested(m.continuation);
    expect(io.flagsValue.toolContinuation).toBe(true);
    m.continuation = { kind: "cancel-on-start", probeId: "p", requestId: null };
    expect(io.flagsValue.toolContinuation).toBe(false);
  });

  it("removes only what it picks, replacing the list only when something goes", () => {
    const { m, list } = makeModel({ messages: [user("a"), user("b")] });
    const before = list.messages;
    m.remove(() => false);
    expect(list.messages).toBe(before);
    m.remove((message) => message.id === "a");
    expect(list.messages.map((message) => message.id)).toEqual(["b"]);
  });
});
