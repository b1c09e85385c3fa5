import type { UIMessage } from "ai";
import { expect } from "vitest";
import { type PropType, defineComponent, h } from "vue";
import { type AgentSocket, useAgentChat } from "../../src";
import { createTestAgent } from "../../src/testing";

/**
 * The testing kit's own acceptance scenario, run by a Node test (Vue's
 * renderer over an object tree) and a browser test (the DOM): a chat
 * component against `createTestAgent()` that sends, streams, runs a client
 * tool, approves a server tool, fails, stops, survives a dropped socket by
 * resuming, and shows another tab's turn.
 */

/** What the scenario needs of a mounted component, whatever renders it. */
export interface Page {
  text(testId: string): string;
  texts(testId: string): string[];
  click(testId: string): void;
}

function partText(part: UIMessage["parts"][number]): string {
  if (part.type === "text") return part.text;
  if (part.type.startsWith("tool-")) {
    const call = part as { state?: string; output?: unknown };
    return `[${part.type.slice(5)}: ${call.state}${call.output === undefined ? "" : ` ${JSON.stringify(call.output)}`}]`;
  }
  return "";
}

/**
 * A chat panel as an app would write one (render function, so Node needs no SFC compiler). Without a `throttle`
 * prop it leaves the chat's default (50 ms), as an app does: the scenario reads the screen right after
 * `advance(n)` and `settled()`, which wait for what the throttle holds back.
 */
export const ChatPanel = defineComponent({
  props: {
    agent: { type: Object as PropType<AgentSocket>, required: true },
    throttle: { type: [Number, Boolean] as PropType<number | false>, default: undefined }
  },
  setup(props) {
    const chat = useAgentChat({
      agent: props.agent,
      ...(props.throttle === undefined ? {} : { throttle: props.throttle }),
      tools: { getCity: { description: "Where the user is", execute: () => ({ city: "Lisbon" }) } }
    });
    const approvals = () =>
      chat.messages.value.flatMap((message) =>
        message.parts.flatMap((part) => {
          const call = part as { state?: string; approval?: { id: string } };
          return call.state === "approval-requested" && call.approval ? [call.approval.id] : [];
        })
      );
    return () =>
      h("div", [
        h(
          "ul",
          chat.messages.value.map((message) => h("li", { key: message.id, "data-testid": `message-${message.role}` }, message.parts.map(partText).join("")))
        ),
        h("p", { "data-testid": "status" }, chat.status.value),
        h("p", { "data-testid": "error" }, chat.error.value?.message ?? ""),
        ...approvals().map((id) => h("button", { key: id, "data-testid": "approve", onClick: () => chat.addToolApprovalResponse({ id, approved: true }) }, "Approve")),
        h("button", { "data-testid": "send", onClick: () => void chat.sendMessage({ text: "Hi" }) }, "Send"),
        h("button", { "data-testid": "stop", onClick: () => void chat.stop() }, "Stop")
      ]);
  }
});

/** The agent the scenario scripts: one reply per turn (a continuation after a tool output or approval is a turn). */
export function scenarioAgent() {
  return createTestAgent({
    pace: "manual",
    replies: [
      "Hello from the agent",
      [{ type: "tool-call", toolName: "getCity", input: {} }],
      "You are in Lisbon",
      [{ type: "tool-call", toolName: "deleteFile", input: { path: "a.txt" }, toolCallId: "call-delete", needsApproval: true }],
      [{ type: "tool-output", toolCallId: "call-delete", output: { deleted: true } }, { type: "text", text: " Deleted." }],
      [{ type: "text", text: "Half" }, { type: "error", message: "The model is overloaded" }],
      "A long answer the user stops half way",
      "An answer that outlives a dropped socket"
    ]
  });
}

/** Runs the scenario; `page` reads and clicks the mounted `ChatPanel`. */
export async function runScenario(agent: ReturnType<typeof scenarioAgent>, page: Page): Promise<void> {
  await agent.settled();
  expect(agent.connected).toBe(true);
  // The chat read the (empty) transcript when the socket opened.
  expect(agent.reads).toBe(1);

  // Send, and watch the reply stream in word by word.
  page.click("send");
  await agent.advance(3); // start, text-start, "Hello"
  expect(page.texts("message-assistant")).toEqual(["Hello"]);
  expect(page.text("status")).toBe("streaming");
  await agent.advance("turn");
  expect(page.texts("message-assistant")).toEqual(["Hello from the agent"]);
  expect(page.text("status")).toBe("ready");

  // A client tool: the chat runs `getCity` and the server continues the turn.
  page.click("send");
  await agent.advance("turn");
  await agent.advance("turn"); // the continuation
  expect(page.texts("message-assistant").at(-1)).toBe('[getCity: output-available {"city":"Lisbon"}]You are in Lisbon');
  expect(agent.received.filter((frame) => frame.type === "cf_agent_tool_result")).toHaveLength(1);

  // A server tool that needs approval: approve it, and the continuation carries its output.
  page.click("send");
  await agent.advance("turn");
  expect(page.texts("message-assistant").at(-1)).toBe("[deleteFile: approval-requested]");
  page.click("approve");
  await agent.advance("turn");
  expect(page.texts("message-assistant").at(-1)).toBe('[deleteFile: output-available {"deleted":true}] Deleted.');
  expect(page.texts("approve")).toEqual([]);

  // A failing turn.
  page.click("send");
  await agent.advance("turn");
  expect(page.text("status")).toBe("error");
  expect(page.text("error")).toContain("The model is overloaded");

  // Stop half way: the text stops growing, the server is told to cancel.
  page.click("send");
  await agent.advance(4); // start, text-start, "A", " long"
  expect(page.texts("message-assistant").at(-1)).toBe("A long");
  page.click("stop");
  await agent.settled();
  expect(page.text("status")).toBe("ready");
  expect(page.texts("message-assistant").at(-1)).toBe("A long");
  expect(agent.received.filter((frame) => frame.type === "cf_agent_chat_request_cancel")).toHaveLength(1);
  expect(agent.streaming).toBe(false);

  // The socket drops mid-stream; the server streams on; the chat resumes the stream when the socket is back.
  page.click("send");
  await agent.advance(3); // start, text-start, "An"
  expect(page.texts("message-assistant").at(-1)).toBe("An");
  agent.drop();
  await agent.advance(2); // " answer", " that" while the client is away
  expect(page.texts("message-assistant").at(-1)).toBe("An");
  await agent.reconnect();
  await agent.settled();
  expect(agent.received.some((frame) => frame.type === "cf_agent_stream_resume_ack")).toBe(true);
  await agent.advance("turn");
  expect(page.texts("message-assistant").at(-1)).toBe("An answer that outlives a dropped socket");
  expect(page.text("status")).toBe("ready");

  // Another tab sends: this chat shows its message and the reply (the default "OK").
  agent.otherTab.send("From the other tab");
  await agent.advance("turn");
  expect(page.texts("message-user").at(-1)).toBe("From the other tab");
  expect(page.texts("message-assistant").at(-1)).toBe("OK");

  // What the chat shows is what the server holds: same messages, in order, nothing twice.
  const shownCount = page.texts("message-user").length + page.texts("message-assistant").length;
  expect(shownCount).toBe(agent.transcript.length);
  expect(page.texts("message-user")).toEqual(agent.transcript.filter((message) => message.role === "user").map((message) => message.parts.map(partText).join("")));
}
