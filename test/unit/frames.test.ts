import { describe, expect, it } from "vitest";
import { isUIMessage, parseJson, readFrame } from "../../src/core/frames";

describe("readFrame", () => {
  it("narrows a response frame and defaults its flags", () => {
    const reading = readFrame({ type: "cf_agent_use_chat_response", id: "r1", body: "{}", done: true, seq: 3 });
    expect(reading).toEqual({
      kind: "chat",
      frame: {
        kind: "response",
        id: "r1",
        body: "{}",
        done: true,
        error: false,
        continuation: false,
        replay: false,
        replayComplete: false,
        seq: 3,
        messageIds: undefined,
        outcome: undefined
      }
    });
  });

  it("names the problem of a response frame with a wrong shape", () => {
    expect(readFrame({ type: "cf_agent_use_chat_response", body: "x" })).toEqual({
      kind: "invalid",
      problem: "a response frame without a string id"
    });
    expect(readFrame({ type: "cf_agent_use_chat_response", id: "r", done: "yes" })).toMatchObject({
      kind: "invalid",
      problem: "a response frame whose done is not a boolean"
    });
  });

  it("drops unknown outcomes and non-numeric seq rather than trusting them", () => {
    const reading = readFrame({ type: "cf_agent_use_chat_response", id: "r", outcome: "exploded", seq: "1" });
    expect(reading).toMatchObject({ kind: "chat", frame: { outcome: undefined, seq: undefined } });
  });

  it("rejects a transcript frame with a malformed message, keeping the rest of the chat intact", () => {
    expect(
      readFrame({ type: "cf_agent_chat_messages", messages: [{ id: "a", role: "user", parts: [] }, { id: 1 }] })
    ).toEqual({ kind: "invalid", problem: "a transcript frame whose message 1 is malformed" });
  });

  it("treats frames of other protocols and the app's own frames as not ours", () => {
    expect(readFrame({ type: "cf_agent_identity", name: "x" })).toEqual({ kind: "other" });
    expect(readFrame({ type: "my_app_event" })).toEqual({ kind: "other" });
    expect(readFrame([1, 2])).toEqual({ kind: "other" });
    expect(readFrame("text")).toEqual({ kind: "other" });
  });

  it("reads resume frames", () => {
    expect(readFrame({ type: "cf_agent_stream_resuming", id: "r", probeId: "p" })).toEqual({
      kind: "chat",
      frame: { kind: "resuming", id: "r", probeId: "p" }
    });
    expect(readFrame({ type: "cf_agent_stream_resume_none", reason: "idle" })).toEqual({
      kind: "chat",
      frame: { kind: "resume-none", reason: "idle", probeId: undefined }
    });
  });
});

describe("parseJson / isUIMessage", () => {
  it("returns undefined for non-JSON and non-strings", () => {
    expect(parseJson("not json")).toBeUndefined();
    expect(parseJson(new ArrayBuffer(2))).toBeUndefined();
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
  });

  it("accepts only messages with an id, a known role and typed parts", () => {
    expect(isUIMessage({ id: "a", role: "assistant", parts: [{ type: "text", text: "x" }] })).toBe(true);
    expect(isUIMessage({ id: "a", role: "robot", parts: [] })).toBe(false);
    expect(isUIMessage({ id: "a", role: "user", parts: [{}] })).toBe(false);
  });
});

