import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { watch } from "vue";
import { type AITool, type OnToolCallCallback, useAgentChat } from "../../src";
import { FakeSocket } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

type Part = UIMessage["parts"][number];
type ToolPart = Part & { toolCallId: string; state: string; output?: unknown; errorText?: string };
type ToolCallArgs = Parameters<OnToolCallCallback>[0];

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function setup(options: Partial<Parameters<typeof useAgentChat>[0]> = {}) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() =>
    useAgentChat({ agent: socket, initialMessages: [], throttle: false, ...options })
  );
  cleanup.push(mounted.unmount);
  return { socket, chat: mounted.result, unmount: mounted.unmount };
}

const probes = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_request");
const acks = (socket: FakeSocket) => socket.sentOf("cf_agent_stream_resume_ack");
const results = (socket: FakeSocket) => socket.sentOf("cf_agent_tool_result");
const approvals = (socket: FakeSocket) => socket.sentOf("cf_agent_tool_approval");
const requests = (socket: FakeSocket) => socket.sentOf("cf_agent_use_chat_request");
const cancels = (socket: FakeSocket) => socket.sentOf("cf_agent_chat_request_cancel");

/** Opens the socket and answers the mount probe: nothing is streaming. */
async function openIdle(socket: FakeSocket) {
  socket.open();
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(1));
  socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[0]!.probeId });
}

const user = (id: string, text = id): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });
const tool = (name: string, toolCallId: string, state: string, extra: Record<string, unknown> = {}) =>
  ({ type: `tool-${name}`, toolCallId, state, input: { q: toolCallId }, ...extra }) as unknown as Part;
const assistant = (id: string, ...parts: Part[]): UIMessage => ({ id, role: "assistant", parts: [{ type: "step-start" }, ...parts] });
/** A transcript whose last reply waits for the client to answer `askUser` (call `c1`). */
const waitingForAnswer = () => [user("u1", "ask me"), assistant("a1", tool("askUser", "c1", "input-available"))];
const waitingForApproval = () => [
  user("u1", "do it"),
  assistant("a1", tool("dangerousAction", "c1", "approval-requested", { approval: { id: "ap1" } }))
];

const toolParts = (message: UIMessage | undefined): ToolPart[] =>
  (message?.parts ?? []).filter((part): part is ToolPart => "toolCallId" in part);
const text = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
const assistants = (messages: readonly UIMessage[]) => messages.filter((message) => message.role === "assistant");

/** An `onToolCall` that records each call and its answer function. */
function recordCalls(result?: () => void | Promise<void>) {
  const calls: ToolCallArgs[] = [];
  const onToolCall: OnToolCallCallback = (args) => {
    calls.push(args);
    return result?.();
  };
  return { calls, onToolCall };
}

/** Streams a continuation the way AIChatAgent does: no message id on `start`, every frame flagged. */
function continueWith(socket: FakeSocket, id: string, delta: string, options: { done?: boolean } = {}) {
  const chunks = [
    { type: "start" },
    { type: "start-step" },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta },
    { type: "text-end", id: "t" },
    { type: "finish-step" },
    { type: "finish" }
  ];
  chunks.forEach((chunk, seq) => socket.chunk(id, chunk, { continuation: true, seq }));
  if (options.done !== false) socket.done(id, { continuation: true });
}

/** Answers the client's continuation probe with STREAM_RESUMING for `id`. */
async function announceContinuation(socket: FakeSocket, id: string) {
  await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
  socket.push({ type: "cf_agent_stream_resuming", id, probeId: probes(socket)[1]!.probeId });
}

describe("onToolCall (rules 78, 79)", () => {
  it("fires once for an input-available call on the last assistant message once the chat is ready (rule 78)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.toolCall).toEqual({ toolCallId: "c1", toolName: "askUser", input: { q: "c1" } });
    // More reconciles (a transcript broadcast, a status change) do not fire it again.
    socket.push({ type: "cf_agent_chat_messages", messages: waitingForAnswer() });
    chat.clearError();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(1);
    expect(results(socket)).toHaveLength(0);
  });

  it("ignores calls on an earlier message, and waits while the last message is not an assistant (rule 78)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall, initialMessages: [...waitingForAnswer(), user("u2", "later")] });
    await openIdle(socket);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(0);
    expect(chat.isServerStreaming.value).toBe(false);
  });

  it("never fires for a server tool: its input-available part waits in the stream until its output (rule 79, #2195)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall });
    await openIdle(socket);
    void chat.sendMessage({ text: "add" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = requests(socket)[0]!.id as string;
    socket.chunk(id, { type: "start", messageId: "a1" });
    socket.chunk(id, { type: "start-step" });
    socket.chunk(id, { type: "tool-input-available", toolCallId: "s1", toolName: "serverAdd", input: { a: 2, b: 3 } });
    await vi.waitFor(() => expect(toolParts(chat.messages.value[1])[0]?.state).toBe("input-available"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chat.status.value).toBe("streaming");
    expect(calls).toHaveLength(0);
    socket.chunk(id, { type: "tool-output-available", toolCallId: "s1", output: { sum: 5 } });
    socket.chunk(id, { type: "finish-step" });
    socket.chunk(id, { type: "finish" });
    socket.done(id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: { sum: 5 } });
    expect(calls).toHaveLength(0);
  });

  it("fires for a client call left waiting when its turn ends, not before (rule 79)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall });
    await openIdle(socket);
    void chat.sendMessage({ text: "ask" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = requests(socket)[0]!.id as string;
    socket.chunk(id, { type: "start", messageId: "a1" });
    socket.chunk(id, { type: "tool-input-available", toolCallId: "c1", toolName: "askUser", input: { q: "?" } });
    socket.chunk(id, { type: "finish" });
    await vi.waitFor(() => expect(toolParts(chat.messages.value[1])).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(0);
    socket.done(id);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.toolCall).toEqual({ toolCallId: "c1", toolName: "askUser", input: { q: "?" } });
  });

  it("waits while another client's turn streams (isServerStreaming), then fires (rule 79)", async () => {
    const socket = new FakeSocket();
    const options: Parameters<typeof useAgentChat>[0] = { agent: socket, initialMessages: waitingForAnswer(), throttle: false };
    const mounted = mountComposable(() => useAgentChat(options));
    cleanup.push(mounted.unmount);
    const chat = mounted.result;
    await openIdle(socket);
    // Another client's turn starts streaming to this socket.
    socket.push({ type: "cf_agent_stream_resuming", id: "other" });
    expect(chat.isServerStreaming.value).toBe(true);
    const { calls, onToolCall } = recordCalls();
    options.onToolCall = onToolCall;
    socket.push({ type: "cf_agent_chat_recovering", recovering: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(0);
    // It ends (here with an error, which renders nothing): the waiting call is answered now.
    socket.push({ type: "cf_agent_use_chat_response", id: "other", body: "failed", done: true, error: true });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.toolCall.toolCallId).toBe("c1");
  });

  it("does not run a call streamed in another client's turn: that client answers it (deviation)", async () => {
    const { calls, onToolCall } = recordCalls();
    const ran = vi.fn();
    const { socket, chat } = setup({
      onToolCall,
      tools: { getLocation: { execute: ran } },
      initialMessages: [user("u1")]
    });
    await openIdle(socket);
    // Another tab's request: its frames reach this tab as live broadcasts.
    socket.chunk("other", { type: "start", messageId: "a1" });
    socket.chunk("other", { type: "tool-input-available", toolCallId: "c1", toolName: "askUser", input: {} });
    socket.chunk("other", { type: "tool-input-available", toolCallId: "c2", toolName: "getLocation", input: {} });
    socket.chunk("other", { type: "finish" });
    socket.done("other");
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(true));
    await vi.waitFor(() => expect(toolParts(chat.messages.value[1])).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(0);
    expect(ran).not.toHaveBeenCalled();
    expect(results(socket)).toHaveLength(0);
    // Its execute work is in flight elsewhere: the chat shows busy until the output arrives.
    expect(chat.isServerStreaming.value).toBe(true);
    socket.push({
      type: "cf_agent_message_updated",
      message: assistant(
        "a1",
        tool("askUser", "c1", "output-available", { output: "yes" }),
        tool("getLocation", "c2", "output-available", { output: {} })
      )
    });
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
  });
});

describe("addToolOutput and the continuation (rules 80-84)", () => {
  it("sends the part's toolName with autoContinue and shows output-available at once (rule 80, #728)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.addToolOutput({ toolCallId: "c1", output: { answer: 42 } });
    expect(results(socket)).toEqual([
      { type: "cf_agent_tool_result", toolCallId: "c1", toolName: "askUser", output: { answer: 42 }, autoContinue: true }
    ]);
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: { answer: 42 } });
    expect(chat.messages.value).toHaveLength(2);
  });

  it("the public addToolOutput looks up the toolName and sends the client tool schemas", async () => {
    const { socket, chat } = setup({
      initialMessages: waitingForAnswer(),
      tools: { getLocation: { description: "where", parameters: { type: "object" }, execute: () => ({}) } }
    });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "x" });
    expect(results(socket)[0]).toMatchObject({
      toolCallId: "c1",
      toolName: "askUser",
      output: "x",
      autoContinue: true,
      clientTools: [{ name: "getLocation", description: "where", parameters: { type: "object" } }]
    });
  });

  it("auto-continue: isToolContinuation at once, a probe on the next tick, status submitted (rule 81)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    expect(chat.isToolContinuation.value).toBe(true);
    expect(probes(socket)).toHaveLength(1);
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    await vi.waitFor(() => expect(chat.status.value).toBe("submitted"));
    expect(chat.isToolContinuation.value).toBe(true);
  });

  it("ACKs the continuation; it extends the same assistant message; done: ready, flag false (rule 82, #1229)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    const counts: number[] = [];
    cleanup.push(watch(chat.messages, (messages) => counts.push(assistants(messages).length), { flush: "sync" }));
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await announceContinuation(socket, "k1");
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "k1" }]);
    continueWith(socket, "k1", "thanks", { done: false });
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("thanks"));
    expect(chat.status.value).toBe("streaming");
    expect(chat.isToolContinuation.value).toBe(true);
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1"]);
    expect(chat.messages.value[1]!.parts.map((part) => part.type)).toEqual([
      "step-start",
      "tool-askUser",
      "step-start",
      "text"
    ]);
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: "yes" });
    expect(Math.max(...counts)).toBe(1);
  });

  it("the continuation stays pinned to its message when a broadcast renames it mid-stream (#1229)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await announceContinuation(socket, "k1");
    socket.chunk("k1", { type: "start" }, { continuation: true, seq: 0 });
    socket.chunk("k1", { type: "start-step" }, { continuation: true, seq: 1 });
    socket.chunk("k1", { type: "text-start", id: "t" }, { continuation: true, seq: 2 });
    socket.chunk("k1", { type: "text-delta", id: "t", delta: "one " }, { continuation: true, seq: 3 });
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("one "));
    // The server's copy of the same message, under another id.
    socket.push({
      type: "cf_agent_chat_messages",
      messages: [user("u1", "ask me"), assistant("renamed", tool("askUser", "c1", "output-available", { output: "yes" }))]
    });
    socket.chunk("k1", { type: "text-delta", id: "t", delta: "two" }, { continuation: true, seq: 4 });
    socket.chunk("k1", { type: "text-end", id: "t" }, { continuation: true, seq: 5 });
    socket.chunk("k1", { type: "finish" }, { continuation: true, seq: 6 });
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "renamed"]);
    expect(text(chat.messages.value[1])).toBe("one two");
    expect(toolParts(chat.messages.value[1])).toHaveLength(1);
  });

  it("a continuation probe answered 'none' ends it: ready, flag false (rule 83)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    await vi.waitFor(() => expect(chat.status.value).toBe("submitted"));
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    expect(chat.status.value).toBe("ready");
    expect(chat.messages.value).toHaveLength(2);
  });

  it("a continuation probe nobody answers ends after 5 s: ready, flag false (rule 83)", async () => {
    vi.useFakeTimers();
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await vi.advanceTimersByTimeAsync(0);
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    expect(chat.status.value).toBe("submitted");
    await vi.advanceTimersByTimeAsync(4_800);
    expect(chat.isToolContinuation.value).toBe(true);
    expect(chat.status.value).toBe("submitted");
    await vi.advanceTimersByTimeAsync(400);
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    expect(chat.status.value).toBe("ready");
  });

  it("output-error: autoContinue false, no continuation; the part shows the error (rule 84)", async () => {
    const { calls, onToolCall } = recordCalls();
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    calls[0]!.addToolOutput({ toolCallId: "c1", state: "output-error", errorText: "no permission" });
    expect(results(socket)).toEqual([
      {
        type: "cf_agent_tool_result",
        toolCallId: "c1",
        toolName: "askUser",
        state: "output-error",
        errorText: "no permission",
        autoContinue: false
      }
    ]);
    expect(chat.isToolContinuation.value).toBe(false);
    // Deviation: the part ends `output-error` with its errorText, as the server stores it
    // (upstream shows the text as an `output-available` output until the server's copy arrives).
    await vi.waitFor(() =>
      expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-error", errorText: "no permission" })
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probes(socket)).toHaveLength(1);
  });

  it("a throwing execute sends output-error with its message, never an unhandled rejection", async () => {
    const { socket, chat } = setup({
      initialMessages: [user("u1"), assistant("a1", tool("getLocation", "c1", "input-available"))],
      tools: {
        getLocation: {
          execute: () => {
            throw new Error("GPS unavailable");
          }
        }
      }
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(results(socket)).toHaveLength(1));
    expect(results(socket)[0]).toMatchObject({
      toolCallId: "c1",
      toolName: "getLocation",
      state: "output-error",
      errorText: "GPS unavailable",
      autoContinue: false
    });
    await vi.waitFor(() => expect(toolParts(chat.messages.value[1])[0]?.state).toBe("output-error"));
    expect(chat.isServerStreaming.value).toBe(false);
  });

  it("execute runs once per call, with the model's input, however often the chat reconciles", async () => {
    const inputs: unknown[] = [];
    let finish!: (value: unknown) => void;
    const { socket, chat } = setup({
      initialMessages: [user("u1"), assistant("a1", tool("getLocation", "c1", "input-available"))],
      tools: {
        getLocation: {
          execute: (input) => {
            inputs.push(input);
            return new Promise((resolve) => (finish = resolve));
          }
        }
      }
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(inputs).toHaveLength(1));
    // hasPendingClientToolCalls: the running execute counts as client work (rule 85).
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.isStreaming.value).toBe(true);
    socket.push({ type: "cf_agent_chat_messages", messages: chat.messages.value });
    chat.clearError();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(inputs).toEqual([{ q: "c1" }]);
    finish({ city: "Lisbon" });
    await vi.waitFor(() => expect(results(socket)).toHaveLength(1));
    expect(results(socket)[0]).toMatchObject({ toolName: "getLocation", output: { city: "Lisbon" }, autoContinue: true });
    expect(chat.isServerStreaming.value).toBe(false);
  });
});

describe("callbacks that fail, and unmounting mid-tool", () => {
  it("an onToolCall that throws is reported, not rethrown, and not called again for that call", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const onToolCall = vi.fn<OnToolCallCallback>(() => {
      throw new Error("handler bug");
    });
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(onToolCall).toHaveBeenCalledTimes(1));
    socket.push({ type: "cf_agent_chat_messages", messages: waitingForAnswer() });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(onToolCall).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledWith(expect.stringContaining("onToolCall threw"), expect.any(Error));
    // Nothing runs for it any more: it does not count as client work.
    expect(chat.isServerStreaming.value).toBe(false);
    expect(results(socket)).toEqual([]);
  });

  it("an onToolCall that rejects is reported and stops counting as client work", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    let fail!: (reason: Error) => void;
    const { calls, onToolCall } = recordCalls(() => new Promise<void>((_, reject) => (fail = reject)));
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(chat.isServerStreaming.value).toBe(true);
    fail(new Error("network down"));
    await vi.waitFor(() => expect(chat.isServerStreaming.value).toBe(false));
    expect(error).toHaveBeenCalledWith(expect.stringContaining("onToolCall rejected"), expect.any(Error));
  });

  it("an execute that settles after unmount sends nothing", async () => {
    let finish!: (value: unknown) => void;
    const { socket, unmount } = setup({
      initialMessages: [user("u1"), assistant("a1", tool("getLocation", "c1", "input-available"))],
      tools: { getLocation: { execute: () => new Promise((resolve) => (finish = resolve)) } }
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(finish).toBeTypeOf("function"));
    unmount();
    const sent = socket.sent.length;
    finish({ city: "Lisbon" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(socket.sent.slice(sent).filter((frame) => frame.type === "cf_agent_tool_result")).toEqual([]);
  });
});

describe("pending client work (rules 85, 86)", () => {
  it("a pending onToolCall makes isServerStreaming and isStreaming true; the output clears them (rule 85)", async () => {
    let answer!: () => void;
    const { calls, onToolCall } = recordCalls(() => new Promise<void>((resolve) => (answer = resolve)));
    const { socket, chat } = setup({ onToolCall, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.isStreaming.value).toBe(true);
    expect(chat.status.value).toBe("ready");
    calls[0]!.addToolOutput({ toolCallId: "c1", output: "done" });
    // The overlay shows the output, so the part no longer waits.
    expect(chat.isServerStreaming.value).toBe(false);
    answer();
    await Promise.resolve();
    expect(chat.isServerStreaming.value).toBe(false);
  });

  it("a tool that waits for a person does not count as client work (rule 86)", async () => {
    const { calls, onToolCall } = recordCalls(() => new Promise<void>(() => {}));
    const { socket, chat } = setup({
      onToolCall,
      // No execute: the tool needs the user's confirmation.
      tools: { askUser: { description: "asks the user" } },
      initialMessages: waitingForAnswer()
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(chat.isServerStreaming.value).toBe(false);
    expect(chat.isStreaming.value).toBe(false);
  });
});

describe("early continuation (rule 87)", () => {
  it("renders a continuation announced before the client probed through the observer; the flag clears at its done", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    // The server starts the continuation before the launch (next tick) probes.
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "k1" }]);
    socket.chunk("k1", { type: "start" }, { continuation: true, replay: true, seq: 0 });
    socket.push({ type: "cf_agent_use_chat_response", id: "k1", body: "", done: false, replay: true, replayComplete: true, continuation: true });
    continueWith(socket, "k1", "early", { done: false });
    await vi.waitFor(() => expect(text(chat.messages.value[1])).toBe("early"));
    expect(chat.isServerStreaming.value).toBe(true);
    expect(chat.isToolContinuation.value).toBe(true);
    socket.done("k1", { continuation: true });
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    expect(chat.isServerStreaming.value).toBe(false);
    // The launch was cancelled: no probe after the result.
    expect(probes(socket)).toHaveLength(1);
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1"]);
    expect(toolParts(chat.messages.value[1])).toHaveLength(1);
  });

  it("an early continuation whose replay is still empty does not add a second assistant message", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    const counts: number[] = [];
    cleanup.push(watch(chat.messages, (messages) => counts.push(assistants(messages).length), { flush: "sync" }));
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    // Nothing buffered yet: the replay is only its closing frame.
    socket.push({ type: "cf_agent_use_chat_response", id: "k1", body: "", done: false, replay: true, replayComplete: true, continuation: true });
    continueWith(socket, "k1", "late start");
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1"]);
    expect(text(chat.messages.value[1])).toBe("late start");
    expect(Math.max(...counts)).toBe(1);
  });
});

describe("approvals (rules 88, 89)", () => {
  for (const approved of [true, false]) {
    it(`finds the part by approval id, sends its toolCallId, and continues (${approved ? "approve" : "deny"}, rule 88)`, async () => {
      const { socket, chat } = setup({ initialMessages: waitingForApproval() });
      await openIdle(socket);
      await chat.addToolApprovalResponse({ id: "ap1", approved });
      expect(approvals(socket)).toEqual([{ type: "cf_agent_tool_approval", toolCallId: "c1", approved, autoContinue: true }]);
      expect(chat.isToolContinuation.value).toBe(true);
      expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "approval-responded", approval: { id: "ap1", approved } });
      await announceContinuation(socket, "k1");
      continueWith(socket, "k1", approved ? "done" : "not done");
      await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
      expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1"]);
      expect(text(chat.messages.value[1])).toBe(approved ? "done" : "not done");
    });
  }

  it("finds an approval on an earlier message too (rule 88)", async () => {
    const { socket, chat } = setup({ initialMessages: [...waitingForApproval(), user("u2"), assistant("a2")] });
    await openIdle(socket);
    await chat.addToolApprovalResponse({ id: "ap1", approved: true });
    expect(approvals(socket)).toEqual([{ type: "cf_agent_tool_approval", toolCallId: "c1", approved: true, autoContinue: true }]);
  });

  it("an unknown approval id sends nothing, warns once naming it, and resolves (rule 89)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForApproval() });
    await openIdle(socket);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const before = chat.messages.value;
    await expect(chat.addToolApprovalResponse({ id: "nope", approved: true })).resolves.toBeUndefined();
    expect(approvals(socket)).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('"nope"');
    expect(chat.isToolContinuation.value).toBe(false);
    expect(chat.messages.value).toEqual(before);
    expect(socket.sent.slice(-1)[0]?.type).toBe("cf_agent_stream_resume_request");
  });
});

describe("autoContinueAfterToolResult: false (rule 90)", () => {
  it("results and approvals send autoContinue:false and nothing probes for a continuation", async () => {
    const { socket, chat } = setup({
      autoContinueAfterToolResult: false,
      initialMessages: [
        user("u1"),
        assistant(
          "a1",
          tool("askUser", "c1", "input-available"),
          tool("dangerousAction", "c2", "approval-requested", { approval: { id: "ap2" } })
        )
      ]
    });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "x" });
    await chat.addToolApprovalResponse({ id: "ap2", approved: true });
    expect(results(socket)[0]).toMatchObject({ toolCallId: "c1", autoContinue: false });
    expect(approvals(socket)[0]).toMatchObject({ toolCallId: "c2", autoContinue: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chat.isToolContinuation.value).toBe(false);
    expect(probes(socket)).toHaveLength(1);
    expect(chat.status.value).toBe("ready");
  });
});

describe("continuation resets (rules 91, 92)", () => {
  it("status error while a continuation launch is pending cancels it (rule 91)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    void chat.sendMessage({ text: "meanwhile" }).catch(() => {});
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    expect(chat.status.value).toBe("submitted");
    // Answered while a turn is in flight: the launch waits for `ready`.
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    expect(chat.isToolContinuation.value).toBe(true);
    const id = requests(socket)[0]!.id as string;
    socket.push({ type: "cf_agent_use_chat_response", id, body: "model failed", done: false, error: true });
    await vi.waitFor(() => expect(chat.status.value).toBe("error"));
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(false));
    chat.clearError();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chat.isToolContinuation.value).toBe(false);
    expect(probes(socket)).toHaveLength(1);
  });

  for (const how of ["clearHistory()", "the server's clear"] as const) {
    it(`clearing during a continuation (${how}) clears the flag; the late settlement leaves it false (rule 92)`, async () => {
      const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
      await openIdle(socket);
      chat.addToolOutput({ toolCallId: "c1", output: "yes" });
      await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
      expect(chat.isToolContinuation.value).toBe(true);
      if (how === "clearHistory()") chat.clearHistory();
      else socket.push({ type: "cf_agent_chat_clear" });
      expect(chat.isToolContinuation.value).toBe(false);
      expect(chat.messages.value).toEqual([]);
      // The probe settles afterwards.
      socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
      await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(chat.isToolContinuation.value).toBe(false);
    });
  }
});

describe("stop() during a continuation", () => {
  it("before the launch: no probe for it, the flag clears, and the turn is cancelled once the server names it", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await chat.stop();
    expect(chat.isToolContinuation.value).toBe(false);
    // Its own probe asks which turn is pending.
    expect(probes(socket)).toHaveLength(2);
    const stopProbe = probes(socket)[1]!.probeId;
    socket.push({ type: "cf_agent_stream_pending", id: "k1", probeId: stopProbe });
    expect(cancels(socket)).toEqual([]);
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    expect(cancels(socket)).toEqual([{ type: "cf_agent_chat_request_cancel", id: "k1" }]);
    expect(acks(socket)).toEqual([]);
    expect(chat.isServerStreaming.value).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probes(socket)).toHaveLength(2);
    expect(chat.status.value).toBe("ready");
  });

  it("after the probe was parked: the pending id is cancelled when the server starts it", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
    socket.push({ type: "cf_agent_stream_pending", id: "k1", probeId: probes(socket)[1]!.probeId });
    await chat.stop();
    expect(chat.isToolContinuation.value).toBe(false);
    expect(chat.status.value).toBe("ready");
    // Another client's turn is not this continuation: it is observed as usual.
    socket.push({ type: "cf_agent_stream_resuming", id: "someone-else" });
    expect(cancels(socket)).toEqual([]);
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    expect(cancels(socket)).toEqual([{ type: "cf_agent_chat_request_cancel", id: "k1" }]);
  });

  it("never cancels another client's turn that answers its probe", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    // Another tab's turn is streaming to this tab.
    socket.push({ type: "cf_agent_stream_resuming", id: "theirs" });
    expect(chat.isServerStreaming.value).toBe(true);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await chat.stop();
    // stop() cancelled the observed turn it follows (upstream's stop); that cancel is expected.
    const before = cancels(socket).length;
    socket.push({ type: "cf_agent_stream_resuming", id: "theirs", probeId: probes(socket).at(-1)!.probeId });
    expect(cancels(socket)).toHaveLength(before);
  });

  it("nothing pending ('none'): nothing is cancelled later", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await chat.stop();
    socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probes(socket)[1]!.probeId });
    socket.push({ type: "cf_agent_stream_resuming", id: "k1" });
    expect(cancels(socket)).toEqual([]);
    expect(acks(socket)).toEqual([{ type: "cf_agent_stream_resume_ack", id: "k1" }]);
  });

  it("once attached: one cancel for the continuation's id (the transport's)", async () => {
    const { socket, chat } = setup({ initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    await announceContinuation(socket, "k1");
    socket.chunk("k1", { type: "start" }, { continuation: true, seq: 0 });
    await chat.stop();
    expect(cancels(socket)).toEqual([{ type: "cf_agent_chat_request_cancel", id: "k1" }]);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(probes(socket)).toHaveLength(2);
  });
});

describe("a bare sendMessage() after a tool output", () => {
  it("shows the server's new reply without a second copy of the tool call", async () => {
    const { socket, chat } = setup({ autoContinueAfterToolResult: false, initialMessages: waitingForAnswer() });
    await openIdle(socket);
    chat.addToolOutput({ toolCallId: "c1", output: "yes" });
    void chat.sendMessage();
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    const id = requests(socket)[0]!.id as string;
    // AIChatAgent answers it as a new turn, under a new id, with only the new parts.
    socket.chunk(id, { type: "start", messageId: "a2" });
    socket.chunk(id, { type: "start-step" });
    socket.chunk(id, { type: "text-start", id: "t" });
    socket.chunk(id, { type: "text-delta", id: "t", delta: "after" });
    socket.chunk(id, { type: "text-end", id: "t" });
    socket.chunk(id, { type: "finish" });
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    socket.done(id);
    await vi.waitFor(() => expect(chat.status.value).toBe("ready"));
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u1", "a1", "a2"]);
    expect(toolParts(chat.messages.value[1])).toHaveLength(1);
    expect(chat.messages.value[2]!.parts.map((part) => part.type)).toEqual(["step-start", "text"]);
    expect(text(chat.messages.value[2])).toBe("after");
  });
});

describe("deprecated options (rule 105)", () => {
  it("each deprecated option warns once per page, however many chats use it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const options = {
      toolsRequiringConfirmation: ["askUser"],
      experimental_automaticToolResolution: true,
      autoSendAfterAllConfirmationsResolved: true
    };
    setup(options);
    setup(options);
    const deprecations = warn.mock.calls.map((args) => String(args[0])).filter((message) => message.includes("Deprecated"));
    expect(deprecations).toHaveLength(3);
    for (const name of Object.keys(options)) {
      expect(deprecations.filter((message) => message.includes(`'${name}'`))).toHaveLength(1);
    }
  });

  it("addToolResult warns once, sends the output and, with auto-continue off, resubmits once no confirmation waits", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { socket, chat } = setup({
      autoContinueAfterToolResult: false,
      tools: { confirmA: { description: "a" }, confirmB: { description: "b" } },
      initialMessages: [
        user("u1"),
        assistant("a1", tool("confirmA", "c1", "input-available"), tool("confirmB", "c2", "input-available"))
      ]
    });
    await openIdle(socket);
    chat.addToolResult({ tool: "confirmA", toolCallId: "c1", output: "ok" });
    expect(results(socket)[0]).toMatchObject({ toolCallId: "c1", toolName: "confirmA", output: "ok", autoContinue: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(requests(socket)).toHaveLength(0);
    chat.addToolResult({ tool: "confirmB", toolCallId: "c2", output: "ok too" });
    await vi.waitFor(() => expect(requests(socket)).toHaveLength(1));
    expect(warn.mock.calls.filter((args) => String(args[0]).includes("addToolResult"))).toHaveLength(1);
  });

  it("experimental_automaticToolResolution runs execute tools in order, reports a throw as text, then continues", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const order: string[] = [];
    const tools: Record<string, AITool> = {
      first: { execute: async () => (order.push("first"), "one") },
      second: {
        execute: () => {
          order.push("second");
          throw new Error("broken");
        }
      }
    };
    const { socket, chat } = setup({
      tools,
      experimental_automaticToolResolution: true,
      initialMessages: [
        user("u1"),
        assistant("a1", tool("first", "c1", "input-available"), tool("second", "c2", "input-available"))
      ]
    });
    await openIdle(socket);
    await vi.waitFor(() => expect(results(socket)).toHaveLength(2));
    expect(order).toEqual(["first", "second"]);
    expect(results(socket).map((frame) => [frame.toolCallId, frame.output, frame.autoContinue])).toEqual([
      ["c1", "one", true],
      ["c2", "Error executing tool: broken", true]
    ]);
    await vi.waitFor(() => expect(chat.isToolContinuation.value).toBe(true));
    await vi.waitFor(() => expect(probes(socket)).toHaveLength(2));
  });
});
