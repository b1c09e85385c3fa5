import type { UIMessageChunk } from "ai";
import { describe, expect, it, vi } from "vitest";
import type { ResponseFrame } from "../../src/core/frames";
import { CLOSED_MID_STREAM, TurnStream } from "../../src/core/turn-stream";
import { response } from "../support/model-harness";

/** Reads what the stream delivered so far (and whether it closed, or the error it ended with). */
function reader(stream: TurnStream) {
  const chunks: UIMessageChunk[] = [];
  const state: { closed: boolean; error?: Error } = { closed: false };
  const read = stream.readable.getReader();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await read.read();
        if (done) return void (state.closed = true);
        chunks.push(value);
      }
    } catch (error) {
      state.error = error as Error;
    }
  })();
  return { chunks, state, cancel: () => read.cancel() };
}

const frame = (chunk: unknown, fields: Partial<ResponseFrame> = {}) => response("r", { chunk, ...fields });
const delta = (text: string, id = "t") => ({ type: "text-delta", id, delta: text });
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("TurnStream", () => {
  it("Rule (a burst is one chunk per part): deltas of one part merge until the burst ends; anything else goes at once, after them", async () => {
    const stream = new TurnStream(() => {});
    const out = reader(stream);
    stream.push(frame({ type: "text-start", id: "t" }));
    for (const word of ["a ", "quote \" ", "new\nline "]) stream.push(frame(delta(word)));
    stream.push(frame(delta("other part", "u")));
    await settle();
    stream.push(frame(delta("next ")));
    stream.push(frame({ type: "text-end", id: "t" }));
    stream.end();
    await vi.waitFor(() => expect(out.state.closed).toBe(true));
    expect(out.chunks).toEqual([
      { type: "text-start", id: "t" },
      delta('a quote " new\nline '),
      delta("other part", "u"),
      delta("next "),
      { type: "text-end", id: "t" }
    ]);
  });

  it("replayed chunks wait for the replay to pause or complete; a second pass of the same replay replaces the first (#30)", async () => {
    const stream = new TurnStream(() => {});
    const out = reader(stream);
    const pass = [{ type: "start", messageId: "a1" }, { type: "text-start", id: "t" }, delta("one ")];
    for (const chunk of pass) stream.push(frame(chunk, { replay: true }));
    await Promise.resolve();
    expect(out.chunks).toEqual([]);
    for (const chunk of pass) stream.push(frame(chunk, { replay: true }));
    stream.push(frame(undefined, { replay: true, replayComplete: true }));
    await vi.waitFor(() => expect(out.chunks).toHaveLength(3));
    expect(out.chunks).toEqual(pass);
  });

  it("a failure with nothing waiting ends the stream with the error; with chunks waiting they go first and the error follows as a chunk", async () => {
    const bare = new TurnStream(() => {});
    const bareOut = reader(bare);
    bare.fail("boom");
    await vi.waitFor(() => expect(bareOut.state.error?.message).toBe("boom"));
    const waiting = new TurnStream(() => {});
    const waitingOut = reader(waiting);
    waiting.push(frame(delta("kept")));
    waiting.fail("boom");
    await vi.waitFor(() => expect(waitingOut.state.closed).toBe(true));
    expect(waitingOut.chunks).toEqual([delta("kept"), { type: "error", errorText: "boom" }]);
  });

  it("Rule (a close interrupts the turn, #2013): what waited goes, then an error chunk says the socket closed mid-stream", async () => {
    const stream = new TurnStream(() => {});
    const out = reader(stream);
    stream.push(frame(delta("half")));
    stream.interrupt();
    await vi.waitFor(() => expect(out.state.closed).toBe(true));
    expect(out.chunks).toEqual([delta("half"), { type: "error", errorText: CLOSED_MID_STREAM }]);
  });

  it("an abort ends the stream as aborted and drops what waited; a cancel by the reader is reported once, and nothing is written after", async () => {
    const aborted = new TurnStream(() => {});
    const abortedOut = reader(aborted);
    aborted.push(frame(delta("dropped")));
    aborted.abort();
    await vi.waitFor(() => expect(abortedOut.state.error?.name).toBe("AbortError"));
    expect(abortedOut.chunks).toEqual([]);
    const cancelled = vi.fn();
    const stream = new TurnStream(cancelled);
    const out = reader(stream);
    await out.cancel();
    stream.push(frame(delta("late")));
    stream.end();
    expect([cancelled.mock.calls.length, stream.open, out.chunks]).toEqual([1, false, []]);
  });
});
