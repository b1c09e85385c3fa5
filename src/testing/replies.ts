import type { Chunk, M, ScriptedReply } from "./sim-port";

/**
 * One step of a scripted reply. A reply streams its steps in order, between
 * a `start` chunk and a `finish` chunk, as `streamText(...).toUIMessageStreamResponse()`
 * would on the server.
 */
export type ReplyStep =
  /** Text, streamed one word (with its leading space) per chunk. */
  | { type: "text"; text: string }
  /** Reasoning, streamed one word per chunk. */
  | { type: "reasoning"; text: string }
  /**
   * A tool call. Without `output` it waits for the client: a client tool
   * (`onToolCall`, `tools`) or a call for the user to answer with
   * `addToolOutput`. With `output` the server ran it (a server tool). With
   * `needsApproval` it asks the user first (`addToolApprovalResponse`); script
   * the next reply (the continuation) with a `tool-output` step for it.
   */
  | { type: "tool-call"; toolName: string; input: unknown; toolCallId?: string; output?: unknown; needsApproval?: boolean }
  /** The output of an earlier call (in a continuation, after an approval). */
  | { type: "tool-output"; toolCallId: string; output: unknown }
  /**
   * The turn fails here: the chunks before it went out. `inBand` sends the
   * error as a stream error followed by the end of the turn; otherwise it is
   * thrown (one error frame that ends the turn).
   */
  | { type: "error"; message?: string; inBand?: boolean }
  /** Any UI message stream chunk, sent as given. */
  | { type: "chunk"; chunk: Record<string, unknown> };

/** A scripted reply: plain text (streamed word by word), or its steps. */
export type Reply = string | readonly ReplyStep[];

/** The words of a text with their leading whitespace: the deltas a reply streams. */
function words(text: string): string[] {
  return text.match(/\s*\S+\s*$|\s*\S+/g) ?? [text];
}

/**
 * The chunks a scripted reply streams. A continuation (the turn after a tool
 * output or approval) extends the message before it: its `start` carries no
 * message id.
 */
export function replyChunks(reply: Reply, turn: { replyId: string; continuation: boolean; newCallId: () => string }): ScriptedReply {
  const chunks: Chunk[] = [turn.continuation ? { type: "start" } : { type: "start", messageId: turn.replyId }];
  // A reply of another shape (a test written without types) fails its turn, so the chat ends in `error`, never stuck.
  if (typeof reply !== "string" && !Array.isArray(reply)) return badReply(chunks, `a reply must be a string or a list of steps, not ${JSON.stringify(reply)}`);
  const steps: readonly ReplyStep[] = typeof reply === "string" ? [{ type: "text", text: reply }] : reply;
  let parts = 0;
  for (const step of steps) {
    switch (step.type) {
      case "text":
      case "reasoning": {
        const id = `${step.type === "text" ? "t" : "r"}-${turn.replyId}-${++parts}`;
        chunks.push({ type: `${step.type}-start`, id });
        for (const delta of words(step.text)) chunks.push({ type: `${step.type}-delta`, id, delta });
        chunks.push({ type: `${step.type}-end`, id });
        break;
      }
      case "tool-call": {
        const toolCallId = step.toolCallId ?? turn.newCallId();
        chunks.push({ type: "tool-input-start", toolCallId, toolName: step.toolName });
        chunks.push({ type: "tool-input-available", toolCallId, toolName: step.toolName, input: step.input });
        if (step.needsApproval) chunks.push({ type: "tool-approval-request", approvalId: `approval-${toolCallId}`, toolCallId });
        else if (step.output !== undefined) chunks.push({ type: "tool-output-available", toolCallId, output: step.output });
        break;
      }
      case "tool-output":
        chunks.push({ type: "tool-output-available", toolCallId: step.toolCallId, output: step.output });
        break;
      case "error":
        return { chunks, fail: { after: chunks.length, how: step.inBand ? "in-band" : "thrown", message: step.message ?? "The scripted reply failed." } };
      case "chunk":
        chunks.push({ ...step.chunk });
        break;
      default:
        return badReply(chunks, `a reply step must have a known type, not ${JSON.stringify(step)}`);
    }
  }
  chunks.push({ type: "finish" });
  return { chunks };
}

function badReply(chunks: Chunk[], problem: string): ScriptedReply {
  const message = `agents-vue/testing: ${problem}.`;
  console.warn(message);
  return { chunks, fail: { after: chunks.length, how: "thrown", message } };
}

/** The chunks of a reply: `start`, a text part of 1 to 4 words, maybe a client tool call, `finish`. */
export function replyPlan(replyId: string, shape: number, continuation: boolean, newCallId: () => string): Chunk[] {
  const words = 1 + (shape & 3);
  const textId = `t-${replyId}-${continuation ? "c" : "r"}`;
  const chunks: Chunk[] = [continuation ? { type: "start" } : { type: "start", messageId: replyId }, { type: "text-start", id: textId }];
  for (let i = 0; i < words; i++) chunks.push({ type: "text-delta", id: textId, delta: `${i === 0 ? "" : " "}w${i}` });
  chunks.push({ type: "text-end", id: textId });
  if (shape & 4) {
    const toolCallId = newCallId();
    chunks.push({ type: "tool-input-start", toolCallId, toolName: "ask" });
    chunks.push({ type: "tool-input-available", toolCallId, toolName: "ask", input: { q: toolCallId } });
  }
  chunks.push({ type: "finish", messageMetadata: { finishReason: "stop" } });
  return chunks;
}

/** How the server builds the message it stores from the chunks it streams. */
export function applyToStored(message: M, chunk: Chunk): void {
  const parts = message.parts as Array<Record<string, unknown>>;
  switch (chunk.type) {
    case "text-start":
      parts.push({ type: "text", text: "", state: "streaming" });
      return;
    case "text-delta": {
      const part = parts.findLast((candidate) => candidate.type === "text");
      if (part) part.text = `${String(part.text)}${String(chunk.delta)}`;
      return;
    }
    case "text-end": {
      const part = parts.findLast((candidate) => candidate.type === "text");
      if (part) part.state = "done";
      return;
    }
    case "tool-input-start":
      parts.push({ type: `tool-${String(chunk.toolName)}`, toolCallId: chunk.toolCallId, state: "input-streaming", input: undefined });
      return;
    case "tool-input-available": {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId);
      if (part) Object.assign(part, { state: "input-available", input: chunk.input });
      else parts.push({ type: `tool-${String(chunk.toolName)}`, toolCallId: chunk.toolCallId, state: "input-available", input: chunk.input });
      return;
    }
    case "tool-approval-request": {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId);
      if (part) Object.assign(part, { state: "approval-requested", approval: { id: chunk.approvalId } });
      return;
    }
    case "tool-output-available": {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId);
      if (part) Object.assign(part, { state: "output-available", output: chunk.output });
      return;
    }
    case "tool-output-error": {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId);
      if (part) Object.assign(part, { state: "output-error", errorText: chunk.errorText });
      return;
    }
    default:
  }
}
