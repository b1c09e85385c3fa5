import { describe, expect, it } from "vitest";
import { readDelta } from "../../src/core/turn-stream";

const body = (chunk: Record<string, unknown>) => JSON.stringify(chunk);

/** The deltas `SocketBridge.deliver` may merge: what it reads must be exactly one JSON string, or nothing. */
describe("readDelta", () => {
  it("reads a text or reasoning delta as its escaped JSON string content", () => {
    expect(readDelta(body({ type: "text-delta", id: "t", delta: "w1 " }))).toEqual({ key: "text-delta:t", type: "text-delta", partId: "t", text: "w1 " });
    expect(readDelta(body({ type: "reasoning-delta", id: "r-2", delta: "hm" }))?.key).toBe("reasoning-delta:r-2");
    const tricky = 'say "hi"\\\n\t\u00e9 \\" end\\';
    const read = readDelta(body({ type: "text-delta", id: "t", delta: tricky }));
    expect(JSON.parse(`"${read?.text}"`)).toBe(tricky);
    expect(readDelta(body({ type: "text-delta", id: "t", delta: "" }))?.text).toBe("");
  });

  it("merged runs concatenate into the concatenated text", () => {
    const parts = ['a"', "\\", 'b\\"', "c"];
    const texts = parts.map((delta) => readDelta(body({ type: "text-delta", id: "t", delta }))!.text);
    expect(JSON.parse(`"${texts.join("")}"`)).toBe(parts.join(""));
  });

  it("leaves alone every other chunk, and any delta that is not exactly type, id and delta", () => {
    for (const other of [
      body({ type: "text-start", id: "t" }),
      body({ type: "tool-input-delta", toolCallId: "c", inputTextDelta: "{" }),
      body({ type: "text-delta", id: "t", delta: "x", providerMetadata: { a: "b" } }),
      // A string field after the delta: merging its text would swallow the field (or the next delta into it).
      body({ type: "text-delta", id: "t", delta: "x", extra: "y" }),
      body({ type: "text-delta", delta: "x", id: "t" }),
      body({ type: "text-delta", id: 'a"b', delta: "x" }),
      '{"type":"text-delta","id":"t","delta":"}',
      '{"type":"text-delta","id":"t","delta":"x\\"}',
      "",
      "not json"
    ]) {
      expect({ other, read: readDelta(other) }).toEqual({ other, read: undefined });
    }
  });
});
