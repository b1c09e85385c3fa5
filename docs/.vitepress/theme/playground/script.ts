/**
 * What the playground's agent says: a reply function for `createTestAgent`
 * (agents-vue/testing), chosen from the last user message, and the client
 * tool the chat runs in the browser. Nothing here talks to a network.
 */
import type { UIMessage } from "ai";
import type { AITool } from "agents-vue";
import type { Reply, TestTurn } from "agents-vue/testing";

/** The prompts the playground offers as buttons, with what each shows. */
export const PROMPTS = [
  { text: "Hello!", shows: "a streamed reply" },
  { text: "What time is it?", shows: "a client tool that runs in this browser" },
  { text: "Delete notes.txt", shows: "a server tool that waits for your approval" },
  { text: "Tell me a long story", shows: "a long reply to stop (or to drop the connection in)" }
] as const;

/** The client tool: the model asks, the browser answers (the chat runs `execute` and sends the output back). */
export const playgroundTools: Record<string, AITool> = {
  getLocalTime: {
    description: "The time on the user's device",
    execute: () => ({ time: new Date().toLocaleTimeString("en-GB") })
  }
};

/** Long enough to stop halfway, or to drop the connection in the middle of. */
export const STORY =
  "Once upon a time a chat reply set out across a WebSocket. Halfway there the connection dropped, " +
  "as connections do on trains and in lifts. The reply did not panic: the agent kept writing it on the server, " +
  "and when the socket came back the client asked where the stream had got to, replayed what it had missed, " +
  "and carried on from there without a single word shown twice. Another tab opened the same conversation and " +
  "watched the rest of the story arrive at the same time. When it was done, every tab showed the same transcript, " +
  "the one the agent had stored, and the reply lived happily ever after in a Durable Object. The end.";

const GREETINGS = [
  "Hi! I'm a scripted agent running in this page: no server, no network. Try the buttons below the chat.",
  "Hello again. Everything you see streams from agents-vue/testing, the same in-memory agent your component tests can use.",
  "Still here. Press “Drop the connection” while I'm answering, and the reply carries on after the reconnect."
];

const textOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("").trim();

type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; approval?: { approved?: boolean } };
const toolParts = (message: UIMessage | undefined): ToolPart[] =>
  (message?.parts ?? []).filter((part): part is UIMessage["parts"][number] & ToolPart => part.type.startsWith("tool-"));

let greeting = 0;
let calls = 0;

/** The reply to a turn: a continuation finishes the tool call it follows; otherwise the last question decides. */
export function playgroundReply(turn: TestTurn): Reply {
  const last = turn.messages.at(-1);
  if (turn.continuation) {
    const part = toolParts(last).at(-1);
    if (part?.type === "tool-getLocalTime") {
      const time = (part.output as { time?: string } | undefined)?.time ?? "unknown";
      return `Your browser says it is ${time}. That answer came from a client tool: the chat ran it here and sent the output back.`;
    }
    if (part?.type === "tool-deleteFile") {
      if (part.state === "output-denied" || part.approval?.approved === false) return "Okay, notes.txt stays where it is.";
      return [
        { type: "tool-output", toolCallId: part.toolCallId, output: { deleted: "notes.txt" } },
        { type: "text", text: "Done: notes.txt is gone (well, it never existed; this agent only pretends)." }
      ];
    }
    return "Done.";
  }
  const question = textOf(last).toLowerCase();
  if (/\btime\b/.test(question)) {
    return [
      { type: "text", text: "Let me ask your browser." },
      { type: "tool-call", toolName: "getLocalTime", input: {}, toolCallId: `time-${++calls}` }
    ];
  }
  if (/\bdelete\b/.test(question)) {
    return [
      { type: "text", text: "Deleting a file needs your approval first." },
      { type: "tool-call", toolName: "deleteFile", input: { path: "notes.txt" }, toolCallId: `delete-${++calls}`, needsApproval: true }
    ];
  }
  if (/\bstory\b/.test(question)) return STORY;
  if (/\bfrom the other tab\b/.test(question)) return "Hello, other tab! This reply streams into every tab of the conversation.";
  return GREETINGS[greeting++ % GREETINGS.length]!;
}
