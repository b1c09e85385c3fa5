/**
 * `agents-vue/testing` in Node: a component mounted with Vue's renderer over
 * an object tree (no DOM) against `createTestAgent()`.
 */
import { resolve } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, expect, it, vi } from "vitest";
import { effectScope } from "vue";
import { getToolApproval, useAgentChat } from "../../src";
import type { UIMessage } from "ai";
import { createTestAgent, type Reply, type TestAgent } from "../../src/testing";
import { pageInNode } from "../support/node-renderer";
import { ChatPanel, runScenario, scenarioAgent } from "../support/testing-kit";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("agents-vue/testing in Node", () => {
  it.each([
    ["the default throttle (50 ms)", undefined],
    ["throttle: false", false]
  ] as const)("drives a chat component with %s: send, stream, client tool, approval, error, stop, dropped socket and resume, another tab", async (_, throttle) => {
    const agent = scenarioAgent();
    const { page, unmount } = pageInNode(ChatPanel, { agent: agent.socket, throttle });
    cleanups.push(unmount, () => agent.dispose());
    await runScenario(agent, page);
  });

  it("the screen right after advance(n), with the default throttle, shows what those chunks brought (issue 47, 1)", async () => {
    const agent = createTestAgent({ pace: "manual", replies: ["Hello! How can I help?"] });
    const { page, unmount } = pageInNode(ChatPanel, { agent: agent.socket });
    cleanups.push(unmount, () => agent.dispose());
    await agent.settled();
    page.click("send");
    // Each advance ends inside a 50 ms window the chat opened at its first chunk: read at once, the screen must hold it.
    await agent.advance(3); // start, text-start, "Hello!"
    expect(page.texts("message-assistant")).toEqual(["Hello!"]);
    await agent.advance(1); // " How"
    expect(page.texts("message-assistant")).toEqual(["Hello! How"]);
    await agent.advance(1); // " can"
    expect(page.texts("message-assistant")).toEqual(["Hello! How can"]);
    expect(page.text("status")).toBe("streaming");
    await agent.advance("turn");
    expect(page.texts("message-assistant")).toEqual(["Hello! How can I help?"]);
    expect(page.text("status")).toBe("ready");
  });
});

const text = (id: string, role: UIMessage["role"], words: string): UIMessage => ({ id, role, parts: [{ type: "text", text: words }] });
const transcriptFrames = (agent: TestAgent) => agent.delivered.filter((frame) => ["cf_agent_chat_messages", "cf_agent_message_updated", "cf_agent_chat_clear"].includes(frame.type));

describe("agents-vue/testing: an ordered agent (`ordered: true`)", () => {
  it("speaks exact sync: the transcript first on connect, every transcript frame one version on, setMessages a replacement", async () => {
    const agent = createTestAgent({ ordered: true, messages: [text("u0", "user", "Hi"), text("a0", "assistant", "Hello")], replies: ["Sure"] });
    const scope = effectScope();
    const chat = scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }))!;
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await agent.settled();
    expect(agent.delivered[0]).toMatchObject({ type: "cf_agent_chat_messages", version: 0, connect: true });
    expect(chat.messages.value.map((message) => message.id)).toEqual(["u0", "a0"]);

    await chat.sendMessage({ text: "Help me" });
    await agent.settled();
    // Another tab's setMessages replaces the transcript on an ordered agent (a stock one keeps what the list leaves out).
    agent.otherTab.setMessages(agent.transcript.slice(0, 2));
    await agent.settled();
    expect(agent.transcript.map((message) => message.id)).toEqual(["u0", "a0"]);
    expect(chat.messages.value).toEqual(agent.transcript);
    const versions = transcriptFrames(agent).map((frame) => frame.version);
    expect(versions).toEqual(versions.map((_, index) => index));
    expect(chat.status.value).toBe("ready");
  });

  it("answers a snapshot request on the socket with the transcript and its version", async () => {
    const agent = createTestAgent({ ordered: true, messages: [text("u0", "user", "Hi")] });
    const scope = effectScope();
    scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }));
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await agent.settled();
    agent.socket.send(JSON.stringify({ type: "agents_vue_snapshot_request", id: "s-1" }));
    await agent.settled();
    expect(agent.delivered.at(-1)).toEqual({ type: "cf_agent_chat_messages", messages: [text("u0", "user", "Hi")], version: 0, snapshot: "s-1" });
  });

  it("without it, the agent is a stock AIChatAgent: no versions, and setMessages keeps what its list leaves out", async () => {
    const agent = createTestAgent({ messages: [text("u0", "user", "Hi"), text("a0", "assistant", "Hello")] });
    const scope = effectScope();
    const chat = scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }))!;
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await agent.settled();
    agent.otherTab.setMessages([]);
    await agent.settled();
    expect(agent.transcript.map((message) => message.id)).toEqual(["u0", "a0"]);
    expect(transcriptFrames(agent).every((frame) => frame.version === undefined)).toBe(true);
    expect(chat.messages.value).toEqual([]);
  });
});

describe("agents-vue/testing: a reply of the wrong shape", () => {
  it("fails its turn with a warning naming the problem, so the chat ends in error instead of waiting for good", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const agent = createTestAgent({ replies: [{ text: "not a step list" } as unknown as Reply, [{ type: "txt", text: "typo" } as never], "fine"] });
    const scope = effectScope();
    const chat = scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }))!;
    cleanups.push(() => scope.stop(), () => agent.dispose(), () => warn.mockRestore());
    for (const [text, problem] of [["one", "a reply must be a string or a list of steps"], ["two", "a reply step must have a known type"]] as const) {
      await chat.sendMessage({ text });
      await agent.settled();
      expect(chat.status.value).toBe("error");
      expect(warn.mock.calls.some((call) => String(call[0]).includes(problem))).toBe(true);
    }
    chat.clearError();
    await chat.sendMessage({ text: "three" });
    await agent.settled();
    expect(chat.status.value).toBe("ready");
    expect(chat.messages.value.at(-1)?.parts).toContainEqual(expect.objectContaining({ type: "text", text: "fine" }));
  });
});

describe("agents-vue/testing stays out of apps", () => {
  it("is not reached from the main entry: a bundle of agents-vue holds none of it", async () => {
    const entry = resolve(import.meta.dirname, "../../src/index.ts");
    const result = await build({
      stdin: { contents: `export * from ${JSON.stringify(entry)};`, resolveDir: resolve(import.meta.dirname, "../.."), loader: "ts" },
      bundle: true,
      write: false,
      format: "esm",
      metafile: true,
      plugins: [{ name: "packages-external", setup: (plugin) => void plugin.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true })) }]
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.startsWith("src/core/"))).toBe(true);
    expect(inputs.filter((path) => path.startsWith("src/testing/"))).toEqual([]);
    expect(result.outputFiles[0]!.text).not.toContain("agents-vue/testing");
  });
});

describe("agents-vue/testing: a reply function reads the transcript its turn starts from", () => {
  it("sees a tool approval answered while the turn before it still streamed (the docs playground's delete)", async () => {
    const seen: string[] = [];
    const agent = createTestAgent({
      pace: "manual",
      reply: (turn) => {
        if (!turn.continuation) return [{ type: "tool-call", toolName: "deleteFile", input: {}, toolCallId: "del-1", needsApproval: true }, { type: "text", text: "Waiting." }];
        const part = turn.messages.at(-1)?.parts.find((candidate) => candidate.type === "tool-deleteFile") as { state?: string } | undefined;
        seen.push(part?.state ?? "none");
        return "Deleted.";
      }
    });
    const scope = effectScope();
    const chat = scope.run(() => useAgentChat({ agent: agent.socket, throttle: false }))!;
    cleanups.push(() => scope.stop(), () => agent.dispose());
    await agent.settled();
    void chat.sendMessage({ text: "Delete notes.txt" });
    const approvalOf = () => chat.messages.value.at(-1)?.parts.map((part) => getToolApproval(part)).find(Boolean);
    while (!approvalOf()) await agent.advance(1);
    expect(chat.status.value).toBe("streaming");
    await chat.addToolApprovalResponse({ id: approvalOf()!.id, approved: true });
    await agent.advance("turn");
    await agent.advance("turn");
    await agent.settled();
    expect(seen).toEqual(["approval-responded"]);
    expect(textOfMessage(chat.messages.value.at(-1))).toContain("Deleted.");
  });
});

const textOfMessage = (message: UIMessage | undefined) => (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
