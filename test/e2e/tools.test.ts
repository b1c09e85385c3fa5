import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { watch } from "vue";
import { type AITool, type OnToolCallCallback, getToolApproval, getToolPartState } from "../../src";
import { afterToolsText, defaultToolCallId, type Script } from "../fixtures/worker/src/script";
import { type Chat, openTracked, whenOpen, whenSettled } from "../support/chat";
import {
  type LogEntry,
  framesOf,
  readLog,
  shape,
  stored,
  textOf,
  uniqueName,
  waitForLog
} from "../support/e2e";

type Part = UIMessage["parts"][number];
type ToolPart = Part & { toolCallId: string; state: string; input?: unknown; output?: unknown; errorText?: string };
type ToolCall = Parameters<OnToolCallCallback>[0]["toolCall"];
type AnswerTool = Parameters<OnToolCallCallback>[0]["addToolOutput"];

const isToolPart = (part: Part): part is ToolPart => "toolCallId" in part;
const toolParts = (message: UIMessage | undefined): ToolPart[] => (message?.parts ?? []).filter(isToolPart);
const assistants = (messages: readonly UIMessage[]) => messages.filter((message) => message.role === "assistant");
const roles = (messages: readonly UIMessage[]) => messages.map((message) => message.role);
const turns = async (name: string) => (await readLog(name)).filter((entry) => entry.kind === "chat-message");
const continuations = async (name: string) => (await turns(name)).filter((entry) => entry.continuation === true);
const json = (value: unknown) => ({ type: "json", value });
const errorText = (value: string) => ({ type: "error-text", value });
/** How the model receives a string output. */
const textOutput = (value: string) => ({ type: "text", value });
const chatScript = (script: Script) => ({ body: { script } });

let cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).toReversed()) fn();
  vi.restoreAllMocks();
});

const open = (name: string, options: Parameters<typeof openTracked>[2] = {}) => openTracked(cleanup, name, options);

/**
 * Watches every publication of a chat's transcript: how many assistant
 * messages it ever showed at once, and whether a tool part, once shown,
 * ever disappeared (a continuation rendered as a second message would do both).
 */
function trackTranscript(chat: Chat) {
  let maxAssistants = 0;
  const seenToolCalls = new Set<string>();
  const lostToolCalls = new Set<string>();
  const stop = watch(
    chat.messages,
    (messages) => {
      maxAssistants = Math.max(maxAssistants, assistants(messages).length);
      const present = new Set(messages.flatMap((message) => toolParts(message).map((part) => part.toolCallId)));
      for (const id of present) seenToolCalls.add(id);
      for (const id of seenToolCalls) if (!present.has(id) && messages.length > 0) lostToolCalls.add(id);
    },
    { flush: "sync", immediate: true }
  );
  cleanup.push(stop);
  return {
    get maxAssistants() {
      return maxAssistants;
    },
    get lostToolCalls() {
      return [...lostToolCalls];
    }
  };
}

/** A client tool with `execute` that records each input it ran with. */
function locationTool(run: (input: unknown) => unknown = () => ({ city: "Lisbon" })) {
  const inputs: unknown[] = [];
  const tool: AITool = {
    description: "Where the user is.",
    parameters: { type: "object", properties: { precise: { type: "boolean" } } },
    execute: async (input) => {
      inputs.push(input);
      return run(input);
    }
  };
  return { tools: { getLocation: tool }, inputs };
}

/** An `onToolCall` that holds each call until the test answers it. */
function heldToolCalls() {
  const calls: Array<{ toolCall: ToolCall; answer: AnswerTool }> = [];
  const onToolCall: OnToolCallCallback = ({ toolCall, addToolOutput }) => {
    calls.push({ toolCall, answer: addToolOutput });
  };
  return { calls, onToolCall };
}

/** The one assistant message's tool part, and its text. */
function onlyReply(messages: readonly UIMessage[]) {
  expect(roles(messages)).toEqual(["user", "assistant"]);
  const reply = messages[1] as UIMessage;
  return { reply, tool: toolParts(reply)[0] as ToolPart, text: textOf(reply) };
}

/**
 * After a bare `sendMessage()` AIChatAgent answers in a new assistant message
 * (a new turn) holding only the new parts: the tool call stays, once, in the first.
 */
function resubmittedReply(messages: readonly UIMessage[]) {
  expect(roles(messages)).toEqual(["user", "assistant", "assistant"]);
  const [, first, second] = messages as [UIMessage, UIMessage, UIMessage];
  expect(toolParts(first)).toHaveLength(1);
  expect(toolParts(second)).toEqual([]);
  return { tool: toolParts(first)[0] as ToolPart, text: textOf(second) };
}

async function expectStoredLikeLocal(name: string, chat: Chat) {
  await vi.waitFor(async () => expect(shape(await stored(name))).toEqual(shape(chat.messages.value)));
}

const requestIdOf = (entry: LogEntry) => entry.requestId as string;

describe("client tools with execute", () => {
  it("runs once in the browser with the model's input; the reply follows in the same assistant message", async () => {
    const name = uniqueName("exec");
    const { tools, inputs } = locationTool();
    // A first-chunk delay makes the continuation stream to this client live
    // (ACKed before its chunks), not only arrive in the final transcript.
    const { chat } = open(name, {
      tools,
      ...chatScript({ toolCalls: [{ toolName: "getLocation", input: { precise: true } }], firstChunkDelayMs: 200 })
    });
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "where am I?" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ city: "Lisbon" })])), {
      timeout: 15_000
    });
    await whenSettled(chat);

    expect(inputs).toEqual([{ precise: true }]);
    const { tool } = onlyReply(chat.messages.value);
    const [first] = await turns(name);
    expect(tool).toMatchObject({
      toolCallId: defaultToolCallId(requestIdOf(first!), 0),
      state: "output-available",
      input: { precise: true },
      output: { city: "Lisbon" }
    });
    // The schema went out with the request; the output went back once, continuing.
    expect(first!.clientTools).toEqual(["getLocation"]);
    const results = await framesOf(name, "cf_agent_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      toolCallId: tool.toolCallId,
      toolName: "getLocation",
      output: { city: "Lisbon" },
      autoContinue: true,
      clientTools: ["getLocation"]
    });
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, true]);
    // One assistant message all along: the continuation never showed as a second one.
    expect(transcript.maxAssistants).toBe(1);
    expect(transcript.lostToolCalls).toEqual([]);
    await expectStoredLikeLocal(name, chat);
    expect(inputs).toHaveLength(1);
  });

  it("a reply that finishes before the client attaches still lands in the same assistant message", async () => {
    const name = uniqueName("execfast");
    const { tools, inputs } = locationTool();
    const { chat } = open(name, { tools, ...chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }] }) });
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "where am I?" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ city: "Lisbon" })])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    expect(inputs).toEqual([{}]);
    expect(transcript.maxAssistants).toBe(1);
    await expectStoredLikeLocal(name, chat);
  });

  it("a throwing execute reports output-error with its message, never an unhandled rejection; the app's next send lets the model see it", async () => {
    const name = uniqueName("execthrow");
    const { tools } = locationTool(() => {
      throw new Error("GPS unavailable");
    });
    const { chat } = open(name, { tools, ...chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }] }) });
    await chat.ready;
    const continuationFlags: boolean[] = [];
    cleanup.push(watch(chat.isToolContinuation, (value) => continuationFlags.push(value), { flush: "sync" }));
    await chat.sendMessage({ text: "where am I?" });

    const [result] = await vi.waitFor(async () => {
      const frames = await framesOf(name, "cf_agent_tool_result");
      expect(frames).toHaveLength(1);
      return frames;
    });
    // upstream: an error result never auto-continues (react.tsx sendToolOutputToServer).
    expect(result).toMatchObject({ toolName: "getLocation", state: "output-error", errorText: "GPS unavailable", autoContinue: false });
    await vi.waitFor(() => expect(getToolPartState(toolParts(chat.messages.value[1])[0]!)).toBe("error"));
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-error", errorText: "GPS unavailable" });
    await whenSettled(chat);
    expect(continuationFlags).toEqual([]);
    await vi.waitFor(async () => expect(toolParts((await stored(name))[1])[0]?.state).toBe("output-error"));

    // The app decides to let the model see the error.
    await chat.sendMessage();
    await whenSettled(chat);
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, false]);
    const { text, tool } = resubmittedReply(chat.messages.value);
    expect(tool).toMatchObject({ state: "output-error", errorText: "GPS unavailable" });
    expect(text).toBe(afterToolsText([errorText("GPS unavailable")]));
    await expectStoredLikeLocal(name, chat);
  });
});

describe("onToolCall and addToolOutput", () => {
  it("answers a tool without execute (askUser) through onToolCall, once, in the same assistant message", async () => {
    const name = uniqueName("ask");
    const seen: ToolCall[] = [];
    const { chat } = open(name, {
      onToolCall: ({ toolCall, addToolOutput }) => {
        seen.push(toolCall);
        addToolOutput({ toolCallId: toolCall.toolCallId, output: { answer: "blue" } });
      },
      ...chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "favourite colour?" } }], firstChunkDelayMs: 150 })
    });
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "guess my colour" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ answer: "blue" })])), {
      timeout: 15_000
    });
    await whenSettled(chat);

    const [first] = await turns(name);
    const toolCallId = defaultToolCallId(requestIdOf(first!), 0);
    expect(seen).toEqual([{ toolCallId, toolName: "askUser", input: { question: "favourite colour?" } }]);
    const results = await framesOf(name, "cf_agent_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolCallId, toolName: "askUser", output: { answer: "blue" }, autoContinue: true });
    expect(onlyReply(chat.messages.value).tool).toMatchObject({ toolCallId, state: "output-available", output: { answer: "blue" } });
    expect(transcript.maxAssistants).toBe(1);
    expect(transcript.lostToolCalls).toEqual([]);
    await expectStoredLikeLocal(name, chat);
  });

  it("while an onToolCall is pending the chat counts as streaming; the output clears it", async () => {
    const name = uniqueName("askbusy");
    const held = heldToolCalls();
    const { chat } = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "sure?" } }] })
    });
    await chat.ready;
    void chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(1));
    // The callback returned synchronously: only an unanswered call with
    // client work (a pending promise or an execute) counts as busy (rule 85).
    expect(chat.status.value).toBe("ready");
    const { toolCall, answer } = held.calls[0]!;
    answer({ toolCallId: toolCall.toolCallId, output: "yes" });
    // The part shows the output at once (the overlay, #728), before the server answers.
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: "yes" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([textOutput("yes")])), { timeout: 15_000 });
    await whenSettled(chat);
    expect(held.calls).toHaveLength(1);
  });

  it("addToolOutput with output-error: the part ends in error, nothing continues, the next send shows the model the error text", async () => {
    const name = uniqueName("askerror");
    const held = heldToolCalls();
    const { chat } = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "allowed?" } }] })
    });
    await chat.ready;
    await chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(1));
    const { toolCall, answer } = held.calls[0]!;
    answer({ toolCallId: toolCall.toolCallId, state: "output-error", errorText: "the user closed the dialog" });
    expect(chat.isToolContinuation.value).toBe(false);
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-error", errorText: "the user closed the dialog" });

    const results = await vi.waitFor(async () => {
      const frames = await framesOf(name, "cf_agent_tool_result");
      expect(frames).toHaveLength(1);
      return frames;
    });
    expect(results[0]).toMatchObject({
      toolCallId: toolCall.toolCallId,
      toolName: "askUser",
      state: "output-error",
      errorText: "the user closed the dialog",
      autoContinue: false
    });
    // The server applied the error and stores it; it does not continue on its own.
    await vi.waitFor(async () => expect(toolParts((await stored(name))[1])[0]?.state).toBe("output-error"));
    await whenSettled(chat);
    expect(await continuations(name)).toHaveLength(0);

    await chat.sendMessage();
    await whenSettled(chat);
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, false]);
    const { text, tool } = resubmittedReply(chat.messages.value);
    expect(text).toBe(afterToolsText([errorText("the user closed the dialog")]));
    expect(tool).toMatchObject({ state: "output-error", errorText: "the user closed the dialog" });
    await expectStoredLikeLocal(name, chat);
  });

  it("two parallel client tool calls: the server continues once, after both results (#1649)", async () => {
    const name = uniqueName("parallel");
    const held = heldToolCalls();
    const { chat } = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({
        toolCalls: [
          { toolName: "askUser", input: { question: "first?" } },
          { toolName: "askUser", input: { question: "second?" } }
        ]
      })
    });
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "two questions" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(2));
    const [a, b] = held.calls as [(typeof held.calls)[0], (typeof held.calls)[0]];
    expect([a.toolCall.input, b.toolCall.input]).toEqual([{ question: "first?" }, { question: "second?" }]);

    a.answer({ toolCallId: a.toolCall.toolCallId, output: "one" });
    // The server has the first result and the client's continuation probe:
    // with the batch incomplete it must hold.
    const firstResult = await waitForLog(name, (entry) => entry.type === "cf_agent_tool_result");
    await waitForLog(name, (entry) => entry.type === "cf_agent_stream_resume_request" && entry.seq > firstResult.seq);
    expect(await continuations(name)).toHaveLength(0);

    b.answer({ toolCallId: b.toolCall.toolCallId, output: "two" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([textOutput("one"), textOutput("two")])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    const log = await readLog(name);
    const results = log.filter((entry) => entry.type === "cf_agent_tool_result");
    const continued = log.filter((entry) => entry.kind === "chat-message" && entry.continuation === true);
    expect(results.map((entry) => entry.output)).toEqual(["one", "two"]);
    expect(continued).toHaveLength(1);
    expect(continued[0]!.seq).toBeGreaterThan(results[1]!.seq);
    const { reply } = onlyReply(chat.messages.value);
    expect(toolParts(reply).map((part) => [part.state, part.output])).toEqual([
      ["output-available", "one"],
      ["output-available", "two"]
    ]);
    expect(transcript.maxAssistants).toBe(1);
    await expectStoredLikeLocal(name, chat);
  });

  it("onToolCall never fires for a server-side tool: its result arrives in the same stream (#2195)", async () => {
    const name = uniqueName("servertool");
    const onToolCall = vi.fn<OnToolCallCallback>();
    const { tools } = locationTool();
    const { chat } = open(name, {
      onToolCall,
      tools,
      ...chatScript({ toolCalls: [{ toolName: "serverAdd", input: { a: 2, b: 3 } }], toolInputStreaming: true, chunkDelayMs: 50 })
    });
    await chat.ready;
    await chat.sendMessage({ text: "add" });
    await whenSettled(chat);
    const { tool, text } = onlyReply(chat.messages.value);
    expect(tool).toMatchObject({ type: "tool-serverAdd", state: "output-available", output: { sum: 5 } });
    expect(text).toBe(afterToolsText([json({ sum: 5 })]));
    expect(onToolCall).not.toHaveBeenCalled();
    const log = await readLog(name);
    expect(log.filter((entry) => entry.type === "cf_agent_tool_result")).toHaveLength(0);
    expect(log.filter((entry) => entry.kind === "tool-executed")).toHaveLength(1);
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false]);
  });

  it("fires for a pending client call loaded from the transcript", async () => {
    const name = uniqueName("loaded");
    const script = chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "still there?" } }] });
    const first = open(name, script);
    await first.chat.ready;
    await first.chat.sendMessage({ text: "ask me later" });
    await whenSettled(first.chat);
    expect(toolParts(first.chat.messages.value[1])[0]?.state).toBe("input-available");
    first.unmount();

    const seen: ToolCall[] = [];
    const { chat } = open(name, {
      ...script,
      onToolCall: ({ toolCall, addToolOutput }) => {
        seen.push(toolCall);
        addToolOutput({ toolCallId: toolCall.toolCallId, output: "yes, here" });
      }
    });
    await chat;
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([textOutput("yes, here")])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    const [turn] = await turns(name);
    expect(seen).toEqual([
      { toolCallId: defaultToolCallId(requestIdOf(turn!), 0), toolName: "askUser", input: { question: "still there?" } }
    ]);
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, true]);
    onlyReply(chat.messages.value);
    await expectStoredLikeLocal(name, chat);
  });
});

/** Waits for the reply to ask for approval; returns the part and its approval id. */
async function awaitingApproval(chat: Chat) {
  await vi.waitFor(() => expect(toolParts(chat.messages.value[1])[0]?.state).toBe("approval-requested"), {
    timeout: 15_000
  });
  await whenSettled(chat);
  const part = toolParts(chat.messages.value[1])[0]!;
  expect(getToolPartState(part)).toBe("waiting-approval");
  return { part, approvalId: getToolApproval(part)!.id };
}

describe("tool approvals", () => {
  it("approved: the server tool runs and the reply follows in the same assistant message", async () => {
    const name = uniqueName("approve");
    const { chat } = open(name, chatScript({ toolCalls: [{ toolName: "dangerousAction", input: { target: "prod" } }], firstChunkDelayMs: 150 }));
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "do it" });
    const { part, approvalId } = await awaitingApproval(chat);
    expect((await readLog(name)).filter((entry) => entry.kind === "tool-executed")).toHaveLength(0);

    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    expect(chat.isToolContinuation.value).toBe(true);
    await vi.waitFor(
      () => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ done: true, target: "prod" })])),
      { timeout: 15_000 }
    );
    await whenSettled(chat);
    expect(chat.isToolContinuation.value).toBe(false);

    const approvals = await framesOf(name, "cf_agent_tool_approval");
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ toolCallId: part.toolCallId, approved: true, autoContinue: true });
    const executed = (await readLog(name)).filter((entry) => entry.kind === "tool-executed");
    expect(executed).toHaveLength(1);
    expect(executed[0]).toMatchObject({ toolName: "dangerousAction", toolCallId: part.toolCallId, input: { target: "prod" } });
    const { tool } = onlyReply(chat.messages.value);
    expect(tool).toMatchObject({ toolCallId: part.toolCallId, state: "output-available", output: { done: true, target: "prod" } });
    expect(transcript.maxAssistants).toBe(1);
    expect(transcript.lostToolCalls).toEqual([]);
    await expectStoredLikeLocal(name, chat);
  });

  it("denied: the part ends output-denied, the tool never runs, the model is told", async () => {
    const name = uniqueName("deny");
    const { chat } = open(name, chatScript({ toolCalls: [{ toolName: "dangerousAction", input: { target: "prod" } }] }));
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "do it" });
    const { part, approvalId } = await awaitingApproval(chat);

    await chat.addToolApprovalResponse({ id: approvalId, approved: false });
    await vi.waitFor(
      () => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([errorText("Tool call execution denied.")])),
      { timeout: 15_000 }
    );
    await whenSettled(chat);
    const approvals = await framesOf(name, "cf_agent_tool_approval");
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ toolCallId: part.toolCallId, approved: false, autoContinue: true });
    const { tool } = onlyReply(chat.messages.value);
    expect(tool.state).toBe("output-denied");
    expect(getToolPartState(tool)).toBe("denied");
    expect((await readLog(name)).filter((entry) => entry.kind === "tool-executed")).toHaveLength(0);
    expect(transcript.maxAssistants).toBe(1);
    await expectStoredLikeLocal(name, chat);
    expect(toolParts((await stored(name))[1])[0]?.state).toBe("output-denied");
  });

  it("an unknown approval id warns once naming it, sends nothing and does not throw", async () => {
    const name = uniqueName("unknownapproval");
    const { chat } = open(name, chatScript({ toolCalls: [{ toolName: "dangerousAction", input: { target: "x" } }] }));
    await chat.ready;
    await chat.sendMessage({ text: "do it" });
    const { part, approvalId } = await awaitingApproval(chat);
    const warn = vi.spyOn(console, "warn");

    await expect(chat.addToolApprovalResponse({ id: "no-such-approval", approved: true })).resolves.toBeUndefined();
    const warnings = warn.mock.calls.filter((args) => args.some((arg) => String(arg).includes("no-such-approval")));
    expect(warnings).toHaveLength(1);
    expect(chat.isToolContinuation.value).toBe(false);
    // The real request is untouched and still answerable.
    expect(toolParts(chat.messages.value[1])[0]?.state).toBe("approval-requested");

    // Frames on one socket arrive in order: once the real approval is logged,
    // a frame for the unknown id would have been logged before it.
    await chat.addToolApprovalResponse({ id: approvalId, approved: false });
    await vi.waitFor(async () => expect(await framesOf(name, "cf_agent_tool_approval")).toHaveLength(1));
    expect((await framesOf(name, "cf_agent_tool_approval"))[0]).toMatchObject({ toolCallId: part.toolCallId });
    await whenSettled(chat);
  });
});

describe("continuation", () => {
  it("a second tab sees the tool call, the result and the continuation, and converges on the same transcript", async () => {
    const name = uniqueName("twotabs");
    const held = heldToolCalls();
    const a = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "ready?" } }], firstChunkDelayMs: 150 })
    });
    const b = open(name);
    await Promise.all([whenOpen(a.chat), whenOpen(b.chat)]);
    await Promise.all([a.chat.ready, b.chat.ready]);
    const watching = trackTranscript(b.chat);

    await a.chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(1));
    const { toolCall, answer } = held.calls[0]!;
    // B shows the call waiting for A's answer.
    await vi.waitFor(() => {
      expect(toolParts(b.chat.messages.value[1])[0]).toMatchObject({ toolCallId: toolCall.toolCallId, state: "input-available" });
    });
    expect(shape(b.chat.messages.value)).toEqual(shape(a.chat.messages.value));

    answer({ toolCallId: toolCall.toolCallId, output: "ready" });
    await vi.waitFor(() => {
      expect(toolParts(b.chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: "ready" });
    });
    await vi.waitFor(() => expect(textOf(b.chat.messages.value[1])).toBe(afterToolsText([textOutput("ready")])), { timeout: 15_000 });
    await Promise.all([whenSettled(a.chat), whenSettled(b.chat)]);
    expect(shape(b.chat.messages.value)).toEqual(shape(a.chat.messages.value));
    expect(b.chat.messages.value.map((message) => message.parts)).toEqual(a.chat.messages.value.map((message) => message.parts));
    expect(watching.maxAssistants).toBe(1);
    await expectStoredLikeLocal(name, a.chat);
  });

  it("a second tab with the same tools does not run a call from the first tab's turn: execute runs once", async () => {
    const name = uniqueName("twotabstools");
    const runs: string[] = [];
    const toolsOf = (tab: string): Record<string, AITool> => ({
      getLocation: {
        execute: () => {
          runs.push(tab);
          return { city: "Lisbon" };
        }
      }
    });
    const a = open(name, { tools: toolsOf("A"), ...chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }] }) });
    const b = open(name, { tools: toolsOf("B") });
    await Promise.all([whenOpen(a.chat), whenOpen(b.chat)]);
    await Promise.all([a.chat.ready, b.chat.ready]);
    const watching = trackTranscript(b.chat);

    await a.chat.sendMessage({ text: "where?" });
    await vi.waitFor(() => expect(textOf(b.chat.messages.value[1])).toBe(afterToolsText([json({ city: "Lisbon" })])), {
      timeout: 15_000
    });
    await Promise.all([whenSettled(a.chat), whenSettled(b.chat)]);
    expect(runs).toEqual(["A"]);
    expect(await framesOf(name, "cf_agent_tool_result")).toHaveLength(1);
    expect(await continuations(name)).toHaveLength(1);
    expect(shape(b.chat.messages.value)).toEqual(shape(a.chat.messages.value));
    expect(watching.maxAssistants).toBe(1);
    await expectStoredLikeLocal(name, b.chat);
  });

  it("a reload during the continuation resumes it into the same assistant message", async () => {
    const name = uniqueName("reloadcont");
    const { tools } = locationTool();
    const script = chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 400 });
    const first = open(name, { tools, ...script });
    await first.chat.ready;
    void first.chat.sendMessage({ text: "where?" });
    await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
    first.unmount();

    const { chat } = open(name, { tools, ...script });
    const transcript = trackTranscript(chat);
    await chat.ready;
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ city: "Lisbon" })])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    onlyReply(chat.messages.value);
    expect(transcript.maxAssistants).toBe(1);
    expect(transcript.lostToolCalls).toEqual([]);
    await expectStoredLikeLocal(name, chat);
    expect((await readLog(name)).filter((entry) => entry.kind === "abort")).toEqual([]);
  });

  it("isToolContinuation is true while the server continues and false after", async () => {
    const name = uniqueName("flag");
    const { tools } = locationTool();
    const { chat } = open(name, {
      tools,
      ...chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 400 })
    });
    await chat.ready;
    const flags: boolean[] = [];
    const states: Array<[string, boolean]> = [];
    cleanup.push(watch(chat.isToolContinuation, (value) => flags.push(value), { flush: "sync" }));
    cleanup.push(watch(chat.status, (status) => states.push([status, chat.isToolContinuation.value]), { flush: "sync" }));
    void chat.sendMessage({ text: "where?" });
    const continued = await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
    expect(chat.isToolContinuation.value).toBe(true);
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([json({ city: "Lisbon" })])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(flags).toEqual([true, false]);
    // The user's own turn ran without the flag, the continuation with it; the
    // flag clears as the continuation settles, in the same task as `ready`.
    const flagged = states.findIndex(([, flag]) => flag);
    expect(states.slice(0, flagged).map(([status]) => status)).toContain("streaming");
    expect(states.slice(flagged)).toEqual([
      ["submitted", true],
      ["streaming", true],
      ["ready", true]
    ]);
    expect((await readLog(name)).find((entry) => entry.kind === "turn-finished" && entry.requestId === continued.requestId)).toMatchObject({
      outcome: "completed"
    });
  });

  it("stop() during the continuation cancels it on the server", async () => {
    const name = uniqueName("stopcont");
    const { tools } = locationTool();
    const { chat } = open(name, {
      tools,
      ...chatScript({ toolCalls: [{ toolName: "getLocation", input: {} }], firstChunkDelayMs: 2_000 })
    });
    await chat.ready;
    void chat.sendMessage({ text: "where?" });
    const continued = await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
    const requestId = requestIdOf(continued);
    // The client attached to the continuation (it knows the request id).
    await waitForLog(name, (entry) => entry.type === "cf_agent_stream_resume_ack" && entry.requestId === requestId);
    expect(chat.isToolContinuation.value).toBe(true);

    await chat.stop();
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === requestId);
    const cancels = await framesOf(name, "cf_agent_chat_request_cancel");
    expect(cancels.map(requestIdOf)).toEqual([requestId]);
    await whenSettled(chat);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(textOf(chat.messages.value[1])).not.toContain("after tools");
    expect((await readLog(name)).find((entry) => entry.kind === "turn-finished" && entry.requestId === requestId)).toMatchObject({
      outcome: "aborted"
    });
  });

  it("stop() right after the output, before the client attached, still cancels the continuation on the server", async () => {
    const name = uniqueName("stopearly");
    const held = heldToolCalls();
    const { chat } = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({ toolCalls: [{ toolName: "askUser", input: { question: "go?" } }], firstChunkDelayMs: 1_500 })
    });
    await chat.ready;
    const transcript = trackTranscript(chat);
    await chat.sendMessage({ text: "ask me" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(1));
    const { toolCall, answer } = held.calls[0]!;
    answer({ toolCallId: toolCall.toolCallId, output: "go" });
    expect(chat.isToolContinuation.value).toBe(true);

    await chat.stop();
    expect(chat.isToolContinuation.value).toBe(false);
    expect(chat.status.value).toBe("ready");
    const continued = await waitForLog(name, (entry) => entry.kind === "chat-message" && entry.continuation === true);
    const requestId = requestIdOf(continued);
    await waitForLog(name, (entry) => entry.kind === "abort" && entry.requestId === requestId);
    expect((await framesOf(name, "cf_agent_chat_request_cancel")).map(requestIdOf)).toEqual([requestId]);
    const finished = await waitForLog(name, (entry) => entry.kind === "turn-finished" && entry.requestId === requestId);
    expect(finished.outcome).toBe("aborted");
    await whenSettled(chat);
    expect(chat.isToolContinuation.value).toBe(false);
    expect(textOf(chat.messages.value[1])).toBe("");
    expect(textOf((await stored(name))[1])).toBe("");
    expect(transcript.maxAssistants).toBe(1);
  });

  it("stop() while the server holds a parallel batch: the flag clears; answering the rest continues once", async () => {
    const name = uniqueName("stopheld");
    const held = heldToolCalls();
    const { chat } = open(name, {
      onToolCall: held.onToolCall,
      ...chatScript({
        toolCalls: [
          { toolName: "askUser", input: { question: "first?" } },
          { toolName: "askUser", input: { question: "second?" } }
        ]
      })
    });
    await chat.ready;
    await chat.sendMessage({ text: "two questions" });
    await vi.waitFor(() => expect(held.calls).toHaveLength(2));
    const [a, b] = held.calls as [(typeof held.calls)[0], (typeof held.calls)[0]];
    a.answer({ toolCallId: a.toolCall.toolCallId, output: "one" });
    const result = await waitForLog(name, (entry) => entry.type === "cf_agent_tool_result");
    await waitForLog(name, (entry) => entry.type === "cf_agent_stream_resume_request" && entry.seq > result.seq);
    expect(chat.isToolContinuation.value).toBe(true);

    await chat.stop();
    expect(chat.isToolContinuation.value).toBe(false);
    expect(chat.status.value).toBe("ready");

    b.answer({ toolCallId: b.toolCall.toolCallId, output: "two" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[1])).toBe(afterToolsText([textOutput("one"), textOutput("two")])), {
      timeout: 15_000
    });
    await whenSettled(chat);
    expect(await continuations(name)).toHaveLength(1);
    expect(await framesOf(name, "cf_agent_chat_request_cancel")).toEqual([]);
    await expectStoredLikeLocal(name, chat);
  });

  it("with autoContinueAfterToolResult: false nothing continues until the app sends again", async () => {
    const name = uniqueName("nocontinue");
    const { tools, inputs } = locationTool();
    const { chat } = open(name, {
      tools,
      autoContinueAfterToolResult: false,
      ...chatScript({ toolCalls: [{ toolName: "getLocation", input: { precise: false } }] })
    });
    await chat.ready;
    const flags: boolean[] = [];
    cleanup.push(watch(chat.isToolContinuation, (value) => flags.push(value), { flush: "sync" }));
    await chat.sendMessage({ text: "where?" });
    const result = await waitForLog(name, (entry) => entry.type === "cf_agent_tool_result");
    expect(result).toMatchObject({ toolName: "getLocation", output: { city: "Lisbon" }, autoContinue: false });
    expect(inputs).toEqual([{ precise: false }]);
    await whenSettled(chat);
    expect(flags).toEqual([]);
    expect(toolParts(chat.messages.value[1])[0]).toMatchObject({ state: "output-available", output: { city: "Lisbon" } });
    expect(textOf(chat.messages.value[1])).toBe("");

    await chat.sendMessage();
    await whenSettled(chat);
    const log = await readLog(name);
    // Only the mount probe: no continuation was probed for.
    expect(log.filter((entry) => entry.type === "cf_agent_stream_resume_request")).toHaveLength(1);
    expect((await turns(name)).map((entry) => entry.continuation)).toEqual([false, false]);
    const { text, tool } = resubmittedReply(chat.messages.value);
    expect(tool).toMatchObject({ state: "output-available", output: { city: "Lisbon" } });
    expect(text).toBe(afterToolsText([json({ city: "Lisbon" })]));
    expect(inputs).toHaveLength(1);
    await expectStoredLikeLocal(name, chat);
  });
});
