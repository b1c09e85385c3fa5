import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { ObservedMessage } from "../../src/core/message-builder";

const textOf = (message: UIMessage) =>
  message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("ObservedMessage (the observer's chunk builder)", () => {
  it("builds text from start/delta/end and adopts the server's message id", () => {
    const observed = new ObservedMessage("local");
    for (const chunk of [
      { type: "start", messageId: "srv-1", messageMetadata: { a: 1 } },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "text-delta", id: "t", delta: "lo" },
      { type: "text-end", id: "t" },
      { type: "finish", messageMetadata: { b: 2 } }
    ]) {
      observed.apply(chunk);
    }
    const message = observed.toMessage();
    expect(message.id).toBe("srv-1");
    expect(message.parts).toEqual([{ type: "text", text: "Hello", state: "done" }]);
    expect(message.metadata).toEqual({ a: 1, b: 2 });
  });

  it("opens a part for a delta whose start it never saw, instead of throwing", () => {
    const observed = new ObservedMessage("m");
    observed.apply({ type: "text-delta", id: "late", delta: "mid-stream" });
    expect(textOf(observed.toMessage())).toBe("mid-stream");
  });

  it("ignores garbage chunks", () => {
    const observed = new ObservedMessage("m");
    for (const chunk of [null, 3, "x", [], { type: 5 }, { type: "unknown-kind" }, { type: "tool-output-available" }]) {
      observed.apply(chunk);
    }
    expect(observed.parts).toEqual([]);
  });

  it("walks a tool call through its states and never regresses a settled part", () => {
    const observed = new ObservedMessage("m");
    observed.apply({ type: "tool-input-start", toolCallId: "c1", toolName: "weather" });
    observed.apply({ type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"city":"Pa' });
    observed.apply({ type: "tool-input-delta", toolCallId: "c1", inputTextDelta: 'ris"}' });
    expect(observed.parts[0]).toMatchObject({ type: "tool-weather", state: "input-streaming", input: { city: "Paris" } });
    observed.apply({ type: "tool-input-available", toolCallId: "c1", toolName: "weather", input: { city: "Paris" } });
    observed.apply({ type: "tool-output-available", toolCallId: "c1", output: { temp: 20 } });
    observed.apply({ type: "tool-input-available", toolCallId: "c1", toolName: "weather", input: { city: "Rome" } });
    expect(observed.parts).toEqual([
      { type: "tool-weather", toolCallId: "c1", state: "output-available", input: { city: "Paris" }, output: { temp: 20 } }
    ]);
  });

  it("records approval requests and denials", () => {
    const observed = new ObservedMessage("m");
    observed.apply({ type: "tool-input-available", toolCallId: "c1", toolName: "rm", input: {} });
    observed.apply({ type: "tool-approval-request", toolCallId: "c1", approvalId: "ap1" });
    expect(observed.parts[0]).toMatchObject({ state: "approval-requested", approval: { id: "ap1" } });
    observed.apply({ type: "tool-output-denied", toolCallId: "c1" });
    expect(observed.parts[0]).toMatchObject({ state: "output-denied" });
  });

  it("upserts data parts by id and keeps transient ones out of the message", () => {
    const observed = new ObservedMessage("m");
    observed.apply({ type: "data-progress", id: "p", data: 1 });
    observed.apply({ type: "data-progress", id: "p", data: 2 });
    observed.apply({ type: "data-ping", data: "x", transient: true });
    expect(observed.parts).toEqual([{ type: "data-progress", id: "p", data: 2 }]);
  });

  it("extends the last assistant message when it is a continuation", () => {
    const observed = new ObservedMessage("fresh", true);
    observed.apply({ type: "start", messageId: "ignored-for-continuations" });
    observed.apply({ type: "text-start", id: "t2" });
    observed.apply({ type: "text-delta", id: "t2", delta: " more" });
    const messages: UIMessage[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "q" }] },
      { id: "a", role: "assistant", parts: [{ type: "text", text: "first" }] }
    ];
    expect(observed.targetIndex(messages)).toBe(1);
    const merged = observed.toMessage();
    expect(merged.id).toBe("a");
    expect(textOf(merged)).toBe("first more");
  });

  it("reports divergence when the stored copy's text is not a prefix of the stream (#2166)", () => {
    const observed = new ObservedMessage("a");
    observed.apply({ type: "text-delta", id: "t", delta: "abc" });
    expect(observed.divergesFrom([{ id: "a", role: "assistant", parts: [{ type: "text", text: "ab" }] }])).toBe(false);
    expect(observed.divergesFrom([{ id: "a", role: "assistant", parts: [{ type: "text", text: "xyz" }] }])).toBe(true);
    expect(observed.divergesFrom([])).toBe(false);
  });
});
