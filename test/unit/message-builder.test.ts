import { type UIMessage, type UIMessageChunk, readUIMessageStream } from "ai";
import { StreamAccumulator, type StreamChunkData } from "agents/chat";
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

  it("does not reopen an approved tool when a continuation replays its approval request or a denial", () => {
    const approved: UIMessage = {
      id: "a",
      role: "assistant",
      parts: [{ type: "tool-rm", toolCallId: "c1", state: "approval-responded", input: {}, approval: { id: "ap1", approved: true } }]
    };
    const observed = observe(
      [
        { type: "tool-approval-request", toolCallId: "c1", approvalId: "ap1" },
        { type: "tool-output-denied", toolCallId: "c1" }
      ],
      approved
    );
    expect(observed.parts).toEqual(approved.parts);
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

/** Upstream's builder over the same chunks: where ours differs, the test says how. */
function upstreamParts(chunks: StreamChunkData[], seed?: UIMessage): UIMessage["parts"] {
  const accumulator = new StreamAccumulator({ messageId: seed?.id ?? "m", existingParts: seed?.parts ?? [] });
  for (const chunk of chunks) accumulator.applyChunk(chunk);
  return accumulator.parts;
}

function observe(chunks: StreamChunkData[], seed?: UIMessage): ObservedMessage {
  const observed = new ObservedMessage("m", seed !== undefined);
  for (const chunk of chunks) observed.apply(chunk);
  if (seed) observed.targetIndex([seed]);
  return observed;
}

/** Our parts for `chunks` (over `seed`, for a continuation), once upstream's builder is seen to build others. */
function oursUnlikeUpstream(chunks: StreamChunkData[], seed?: UIMessage): UIMessage["parts"] {
  const ours = observe(chunks, seed).parts;
  expect(upstreamParts(chunks, seed && structuredClone(seed))).not.toEqual(ours);
  return ours;
}

describe("ObservedMessage where it differs from upstream's StreamAccumulator", () => {
  it("routes text and reasoning deltas by part id, as the AI SDK does (upstream writes to the last part)", () => {
    const chunks = [
      { type: "text-start", id: "a" },
      { type: "text-start", id: "b" },
      { type: "text-delta", id: "a", delta: "A" },
      { type: "text-delta", id: "b", delta: "B" },
      { type: "text-end", id: "a" },
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-start", id: "r2" },
      { type: "reasoning-delta", id: "r1", delta: "one" }
    ];
    const expected = [
      { type: "text", text: "A", state: "done" },
      { type: "text", text: "B", state: "streaming" },
      { type: "reasoning", text: "one", state: "streaming" },
      { type: "reasoning", text: "", state: "streaming" }
    ];
    expect(oursUnlikeUpstream(chunks)).toEqual(expected);
  });

  it("opens a new part for a delta whose part was never opened (upstream extends the last, finished, part)", () => {
    const chunks = [
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "Hello" },
      { type: "text-end", id: "t1" },
      { type: "text-delta", id: "t2", delta: "World" }
    ];
    const expected = [
      { type: "text", text: "Hello", state: "done" },
      { type: "text", text: "World", state: "streaming" }
    ];
    expect(oursUnlikeUpstream(chunks)).toEqual(expected);
  });

  it("a recovery continuation extends only the interrupted streaming part, once (upstream extends any last text part)", () => {
    const interrupted: UIMessage = { id: "a", role: "assistant", parts: [{ type: "text", text: "Hel", state: "streaming" }] };
    const chunks = [
      { type: "text-delta", id: "c1", delta: "lo" },
      { type: "text-end", id: "c1" },
      { type: "text-delta", id: "c2", delta: "again" }
    ];
    const expected = [
      { type: "text", text: "Hello", state: "done" },
      { type: "text", text: "again", state: "streaming" }
    ];
    expect(oursUnlikeUpstream(chunks, interrupted)).toEqual(expected);

    const finished: UIMessage = { id: "a", role: "assistant", parts: [{ type: "text", text: "Done.", state: "done" }] };
    const resumed = [{ type: "text-delta", id: "c1", delta: "More" }];
    const separate = [
      { type: "text", text: "Done.", state: "done" },
      { type: "text", text: "More", state: "streaming" }
    ];
    expect(oursUnlikeUpstream(resumed, finished)).toEqual(separate);
  });

  it("seeds a continuation with copies: the message it extends is never written into (upstream's mergeInto writes into it)", () => {
    const messages: UIMessage[] = [
      { id: "a", role: "assistant", parts: [{ type: "text", text: "Hel", state: "streaming" }] }
    ];
    const observed = new ObservedMessage("fresh", true);
    observed.apply({ type: "text-delta", id: "c", delta: "lo" });
    expect(observed.targetIndex(messages)).toBe(0);
    expect(textOf(observed.toMessage())).toBe("Hello");
    expect(messages[0]!.parts).toEqual([{ type: "text", text: "Hel", state: "streaming" }]);

    const upstream = new StreamAccumulator({ messageId: "fresh", continuation: true });
    upstream.applyChunk({ type: "text-delta", id: "c", delta: "lo" });
    const original: UIMessage[] = [{ id: "a", role: "assistant", parts: [{ type: "text", text: "Hel", state: "streaming" }] }];
    upstream.mergeInto(original);
    expect(original[0]!.parts).not.toEqual([{ type: "text", text: "Hel", state: "streaming" }]);
  });

  it("never lets a late result overwrite a settled tool part, and a final result drops preliminary (upstream does neither)", () => {
    const chunks = [
      { type: "tool-input-available", toolCallId: "c1", toolName: "search", input: { q: "x" } },
      { type: "tool-output-available", toolCallId: "c1", output: "partial", preliminary: true },
      { type: "tool-output-available", toolCallId: "c1", output: "final" },
      { type: "tool-output-available", toolCallId: "c1", output: "replayed" },
      { type: "tool-output-error", toolCallId: "c1", errorText: "late" }
    ];
    const expected = { toolCallId: "c1", state: "output-available", output: "final" };
    const [part] = observe(chunks).parts;
    expect(part).toMatchObject(expected);
    expect(part).not.toHaveProperty("preliminary");
    expect(upstreamParts(chunks)[0]).not.toMatchObject(expected);
  });

  it("builds tool parts in the AI SDK's shapes: no toolName on a static part, dynamic-tool for a dynamic one", () => {
    const chunks = [
      { type: "tool-input-start", toolCallId: "s", toolName: "weather" },
      { type: "tool-input-start", toolCallId: "d", toolName: "mcp_lookup", dynamic: true }
    ];
    const expected = [
      { type: "tool-weather", toolCallId: "s", state: "input-streaming", input: undefined },
      { type: "dynamic-tool", toolName: "mcp_lookup", toolCallId: "d", state: "input-streaming", input: undefined }
    ];
    expect(observe(chunks).parts).toStrictEqual(expected);
    expect(upstreamParts(chunks)).not.toStrictEqual(expected);
  });

  it("shows a tool's input while it streams, as the AI SDK does (upstream leaves it empty until input-available)", () => {
    const chunks = [
      { type: "tool-input-start", toolCallId: "c1", toolName: "weather" },
      { type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"city":"Paris"}' }
    ];
    expect(observe(chunks).parts[0]).toMatchObject({ input: { city: "Paris" } });
    expect(upstreamParts(chunks)[0]).toMatchObject({ input: undefined });
  });

  it("ignores tool chunks without a tool call id or tool name (upstream opens a tool-undefined part)", () => {
    const chunks = [{ type: "tool-input-start" }, { type: "tool-input-available", toolCallId: "c1", input: {} }];
    expect(observe(chunks).parts).toEqual([]);
    expect(upstreamParts(chunks)).not.toEqual([]);
  });

  it("keeps reasoning-file parts (upstream drops the chunk)", () => {
    const chunks = [{ type: "reasoning-file", mediaType: "image/png", url: "data:image/png;base64,AA==" }];
    const expected = [{ type: "reasoning-file", mediaType: "image/png", url: "data:image/png;base64,AA==" }];
    expect(observe(chunks).parts).toEqual(expected);
    expect(upstreamParts(chunks)).toEqual([]);
  });

  it("ignores a chunk whose type is not a string (upstream throws)", () => {
    expect(() => observe([{ type: 5 } as unknown as StreamChunkData])).not.toThrow();
    expect(() => upstreamParts([{ type: 5 } as unknown as StreamChunkData])).toThrow(TypeError);
  });
});

/** The message the AI SDK builds from `chunks` on the tab that sent the request (its last snapshot). */
async function aiSdkMessage(chunks: Array<Record<string, unknown>>): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as UIMessageChunk);
      controller.close();
    }
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = structuredClone(message);
  return last!;
}

/** A tool call's input chunks. */
const call = (toolCallId: string, toolName: string, input: unknown) => [
  { type: "tool-input-start", toolCallId, toolName },
  { type: "tool-input-available", toolCallId, toolName, input }
];

describe("ObservedMessage and the AI SDK's own stream reader", () => {
  it("an observed approval keeps every field the sender's has: descriptor, inputSchemaInput, requestReason, isAutomatic, signature (issue 47, 5)", async () => {
    const chunks = [
      { type: "start", messageId: "reply-1" },
      { type: "start-step" },
      ...call("c1", "deleteFile", { path: "a.txt" }),
      {
        type: "tool-approval-request",
        approvalId: "ap1",
        toolCallId: "c1",
        approvalDescriptor: { title: "Delete a.txt", risk: "high" },
        inputSchemaInput: { path: "a.txt", force: "yes" },
        reason: "Deleting cannot be undone",
        signature: "sig-1"
      },
      ...call("c2", "readFile", { path: "b.txt" }),
      { type: "tool-approval-request", approvalId: "ap2", toolCallId: "c2", isAutomatic: true, signature: "sig-2" },
      { type: "tool-approval-response", approvalId: "ap2", approved: true, reason: "reads are allowed" },
      { type: "tool-output-available", toolCallId: "c2", output: { text: "hello" } },
      ...call("c3", "sendMail", { to: "x" }),
      { type: "tool-approval-request", approvalId: "ap3", toolCallId: "c3", isAutomatic: true },
      { type: "tool-approval-response", approvalId: "ap3", approved: false, reason: "mail is off" },
      { type: "finish-step" },
      { type: "finish" }
    ];
    const sender = await aiSdkMessage(chunks);
    const watcher = observe(chunks as StreamChunkData[]).toMessage();
    expect(watcher.parts).toEqual(sender.parts);
    const approvals = watcher.parts.map((part) => (part as { approval?: unknown }).approval);
    expect(approvals).toEqual([
      undefined,
      {
        id: "ap1",
        descriptor: { title: "Delete a.txt", risk: "high" },
        inputSchemaInput: { path: "a.txt", force: "yes" },
        requestReason: "Deleting cannot be undone",
        signature: "sig-1"
      },
      { id: "ap2", isAutomatic: true, signature: "sig-2", approved: true, reason: "reads are allowed" },
      { id: "ap3", isAutomatic: true, approved: false, reason: "mail is off" }
    ]);
    expect(watcher.parts.map((part) => (part as { state?: string }).state)).toEqual([undefined, "approval-requested", "output-available", "approval-responded"]);
  });

  it("an answer for an approval it never saw, or for a settled part, changes nothing", () => {
    const chunks = [
      ...call("c1", "deleteFile", {}),
      { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" },
      { type: "tool-output-available", toolCallId: "c1", output: 1 },
      { type: "tool-approval-response", approvalId: "ap1", approved: false },
      { type: "tool-approval-response", approvalId: "nobody", approved: true },
      { type: "tool-approval-response", approved: true }
    ];
    expect(observe(chunks as StreamChunkData[]).parts).toEqual([
      { type: "tool-deleteFile", toolCallId: "c1", state: "output-available", input: {}, output: 1, approval: { id: "ap1" } }
    ]);
  });
});
