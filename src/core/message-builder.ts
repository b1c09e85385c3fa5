import type { UIMessage } from "ai";
import { StreamAccumulator, type StreamChunkData, applyChunkToParts } from "agents/chat";
import { isRecord } from "./frames";

type Part = UIMessage["parts"][number];
type Loose = Record<string, unknown>;

const SETTLED_TOOL_STATES: ReadonlySet<unknown> = new Set(["output-available", "output-error", "output-denied"]);
const TEXT_CHUNK = /^(text|reasoning)-(start|delta|end)$/;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function textOf(parts: readonly Part[]): string {
  let text = "";
  for (const part of parts) if (part.type === "text") text += part.text;
  return text;
}

function parsePartialInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Builds one assistant message from the chunks of a stream this client did not
 * start (another tab's turn, a server-initiated turn, a resume the client
 * observes). It is synchronous, so a transcript frame that arrives between two
 * chunks always sees the latest text, and it never throws on a chunk that
 * references a part it has not seen: such a chunk opens the part instead.
 *
 * Upstream's `StreamAccumulator` does the work (metadata, files, sources, data
 * parts, most tool chunks); the rules below are ours where upstream's differ,
 * each shown by a test in `test/unit/message-builder.test.ts`.
 */
export class ObservedMessage extends StreamAccumulator {
  readonly continuation: boolean;
  /** A continuation adopts the message it extends on first merge; chunks wait here until then. */
  private unseeded: Loose[] | null;
  /** Open text and reasoning parts by kind and part id. */
  private readonly open = new Map<string, Loose>();
  private readonly inputText = new Map<string, string>();
  /** Whether this continuation already continued the interrupted text part (see `resumeInterruptedText`). */
  private resumedText = false;

  constructor(id: string, continuation = false) {
    // Given parts, upstream keeps no continuation queue of its own: `targetIndex` seeds instead.
    super({ messageId: id, continuation, existingParts: [] });
    this.continuation = continuation;
    this.unseeded = continuation ? [] : null;
  }

  /** Applies one UI message chunk. Unknown or malformed chunks are ignored. */
  apply(chunk: unknown): void {
    // Upstream's builder throws on a chunk whose type is not a string.
    if (!isRecord(chunk) || typeof chunk.type !== "string") return;
    this.unseeded?.push(chunk);
    this.step(chunk);
  }

  private step(chunk: Loose): void {
    const type = chunk.type as string;
    const text = TEXT_CHUNK.exec(type);
    if (text) this.applyText(text[1] as string, text[2] as string, chunk);
    else if (type.startsWith("tool-")) this.applyTool(type, chunk);
    // Upstream drops AI SDK 7's `reasoning-file` chunk.
    else if (type === "reasoning-file") this.parts.push({ type, mediaType: chunk.mediaType, url: chunk.url } as Part);
    else this.applyChunk(chunk as StreamChunkData);
  }

  /** Text and reasoning go to the part their id opened, as in the AI SDK; upstream writes to the last part of the kind. */
  private applyText(kind: string, phase: string, chunk: Loose): void {
    const key = `${kind}:${str(chunk.id) ?? ""}`;
    let part = this.open.get(key);
    if (phase === "end") {
      if (part) part.state = "done";
      this.open.delete(key);
      return;
    }
    if (phase === "start" || !part) {
      part = phase === "delta" && kind === "text" ? this.resumeInterruptedText() : undefined;
      if (!part) this.parts.push((part = { type: kind, text: "", state: "streaming" }) as Part);
      this.open.set(key, part);
    }
    if (phase === "delta") part.text = (part.text as string) + (str(chunk.delta) ?? "");
  }

  /**
   * A continuation of a turn that was cut off (a server restart) extends the
   * text part that was still streaming: `AIChatAgent` drops the
   * continuation's first `text-start` then and appends its deltas to that
   * part, so the first delta for a part this stream never opened lands there
   * too. Any other unopened delta opens a part (upstream extends a finished one).
   */
  private resumeInterruptedText(): Loose | undefined {
    if (!this.continuation || this.resumedText) return undefined;
    const last = this.parts.findLast((part) => part.type === "text") as Loose | undefined;
    if (last?.state !== "streaming") return undefined;
    this.resumedText = true;
    return last;
  }

  private applyTool(type: string, chunk: Loose): void {
    const toolCallId = str(chunk.toolCallId);
    // Upstream opens a `tool-undefined` part for a chunk without ids.
    if (!toolCallId) return;
    let part = this.parts.findLast((candidate) => (candidate as Loose).toolCallId === toolCallId) as Loose | undefined;
    if (!part) {
      const toolName = str(chunk.toolName);
      // A result for a call this message never saw belongs to another message.
      if (!toolName || !type.startsWith("tool-input-")) return;
      // The AI SDK's shapes: a static part has no `toolName` field, a dynamic one is a `dynamic-tool` (upstream has neither).
      part =
        chunk.dynamic === true
          ? { type: "dynamic-tool", toolName, toolCallId, state: "input-streaming", input: undefined }
          : { type: `tool-${toolName}`, toolCallId, state: "input-streaming", input: undefined };
      if (chunk.providerExecuted === true) part.providerExecuted = true;
      this.parts.push(part as Part);
    }
    if (type === "tool-input-delta") {
      // The input shows as it streams, as in the AI SDK; upstream leaves it empty until `tool-input-available`.
      if (part.state !== "input-streaming") return;
      const text = (this.inputText.get(toolCallId) ?? "") + (str(chunk.inputTextDelta) ?? "");
      this.inputText.set(toolCallId, text);
      const partial = parsePartialInput(text);
      if (partial !== undefined) part.input = partial;
    } else if (type === "tool-output-available") {
      // A settled result is never regressed and a final one drops `preliminary`; upstream overwrites and keeps the flag.
      if (part.state === "output-available" && part.preliminary !== true) return;
      part.state = "output-available";
      part.output = chunk.output;
      if (chunk.preliminary === true) part.preliminary = true;
      else delete part.preliminary;
    } else if (type !== "tool-output-error" || !SETTLED_TOOL_STATES.has(part.state)) {
      // Upstream lets a late `tool-output-error` overwrite a settled part; that one is dropped above.
      applyChunkToParts(this.parts, chunk as StreamChunkData);
    }
  }

  /**
   * Where this message lands in `messages`: the message with its id, or for a
   * continuation the last assistant message. -1 means it is appended. A
   * continuation seen for the first time adopts that message's parts, id and
   * metadata and replays its queued chunks on top of them.
   */
  targetIndex(messages: readonly UIMessage[]): number {
    // The observed message is almost always last; check there before scanning.
    const last = messages.length - 1;
    const id = this.messageId;
    let index = messages[last]?.id === id ? last : messages.findIndex((message) => message.id === id);
    if (index < 0 && this.continuation) {
      index = messages.findLastIndex((message) => message.role === "assistant");
    }
    if (this.unseeded) {
      const queued = this.unseeded;
      this.unseeded = null;
      const target = messages[index];
      // Copies: upstream's `mergeInto` seeds with the target's own parts and then writes into them.
      this.parts.splice(0, this.parts.length, ...(target?.parts.map((part) => ({ ...part })) ?? []));
      this.metadata = isRecord(target?.metadata) ? { ...target.metadata } : undefined;
      if (target) this.messageId = target.id;
      this.open.clear();
      this.resumedText = false;
      for (const chunk of queued) this.step(chunk);
    }
    return index;
  }

  /**
   * True when `messages` already hold this message with text this stream does
   * not extend: the stored copy is then authoritative (#2166). Upstream's
   * `observedDivergesFrom` is the same rule, but `agents/chat` 0.32 does not export it.
   */
  divergesFrom(messages: readonly UIMessage[]): boolean {
    const existing = messages.find((message) => message.id === this.messageId);
    return existing !== undefined && !textOf(this.parts).startsWith(textOf(existing.parts));
  }
}
