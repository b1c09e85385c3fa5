import type { UIMessage } from "ai";
import { isRecord } from "./frames";

type Part = UIMessage["parts"][number];
type Loose = Record<string, unknown>;

const SETTLED_TOOL_STATES: ReadonlySet<string> = new Set([
  "output-available",
  "output-error",
  "output-denied"
]);

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function mergeMetadata(current: unknown, next: unknown): unknown {
  if (!isRecord(next)) return current;
  return isRecord(current) ? { ...current, ...next } : { ...next };
}

/**
 * Rule (an observed approval keeps what the AI SDK keeps): the approval a
 * `tool-approval-request` chunk asks for, with every field the AI SDK's own
 * stream reader keeps on the sender's tab: the id, `descriptor` (the chunk's
 * `approvalDescriptor`), `inputSchemaInput` (when the chunk has the field),
 * `requestReason` (the chunk's `reason`), `isAutomatic` (only when true) and
 * `signature`. Upstream's builder keeps the id and the descriptor only.
 */
function requestedApproval(chunk: Loose): Loose {
  const approval = defined({ id: str(chunk.approvalId) ?? "", descriptor: chunk.approvalDescriptor, requestReason: chunk.reason, isAutomatic: chunk.isAutomatic === true || undefined, signature: chunk.signature });
  if ("inputSchemaInput" in chunk) approval.inputSchemaInput = chunk.inputSchemaInput;
  return approval;
}

/** `fields` without the ones that are `null` or `undefined`. */
function defined(fields: Loose): Loose {
  for (const key in fields) if (fields[key] == null) delete fields[key];
  return fields;
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
 */
export class ObservedMessage {
  id: string;
  readonly continuation: boolean;
  parts: Part[] = [];
  #metadata: unknown = undefined;
  /** A continuation adopts the message it extends on first merge; chunks wait here until then. */
  #unseeded: Loose[] | null;
  readonly #openText = new Map<string, Loose>();
  readonly #openReasoning = new Map<string, Loose>();
  readonly #inputText = new Map<string, string>();
  /** Whether this continuation already continued the interrupted text part (see `resumeInterruptedText`). */
  #resumedText = false;
  /** Whether the stream named the message (a `start` with its id); a plain-text reply's does not. */
  #named = false;
  /** How many leading parts a continuation adopted from the message it extends (see `targetIndex`). */
  #seeded = 0;

  constructor(id: string, continuation = false) {
    this.id = id;
    this.continuation = continuation;
    this.#unseeded = continuation ? [] : null;
  }

  get hasParts(): boolean {
    return this.parts.length > 0;
  }

  /** Concatenated text of the text parts; used to detect a copy that diverged. */
  #text(): string {
    let text = "";
    for (const part of this.parts) if (part.type === "text") text += part.text;
    return text;
  }

  /**
   * A stream that named no message id renders under a local id; the server
   * stores the reply under its own. A new assistant message in a transcript
   * (one not on screen) whose text this stream's extends, or that extends it,
   * is that stored copy: its id is taken (issue 22, 1).
   */
  adoptStoredId(snapshot: readonly UIMessage[], onScreen: readonly UIMessage[]): void {
    if (this.#named || this.continuation) return;
    const shown = new Set(onScreen.map((message) => message.id));
    const text = this.#text();
    const copy = snapshot.findLast((message) => {
      if (message.role !== "assistant" || shown.has(message.id)) return false;
      const stored = message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
      return stored.length > 0 && (text.startsWith(stored) || stored.startsWith(text));
    });
    if (!copy) return;
    this.id = copy.id;
    this.#named = true;
  }

  /** Applies one UI message chunk. Unknown or malformed chunks are ignored. */
  apply(chunk: unknown): void {
    if (!isRecord(chunk) || typeof chunk.type !== "string") return;
    this.#unseeded?.push(chunk);
    this.#applyChunk(chunk);
  }

  #applyChunk(chunk: Loose): void {
    const type = chunk.type as string;
    switch (type) {
      case "start":
        if (typeof chunk.messageId === "string" && !this.continuation) {
          this.id = chunk.messageId;
          this.#named = true;
        }
        this.#metadata = mergeMetadata(this.#metadata, chunk.messageMetadata);
        return;
      case "finish":
      case "message-metadata":
        this.#metadata = mergeMetadata(this.#metadata, chunk.messageMetadata);
        return;
      case "text-start":
      case "reasoning-start":
        this.#openStreamingPart(type === "text-start" ? "text" : "reasoning", str(chunk.id) ?? "");
        return;
      case "text-delta":
      case "reasoning-delta": {
        const kind = type === "text-delta" ? "text" : "reasoning";
        const key = str(chunk.id) ?? "";
        const part =
          this.#openParts(kind).get(key) ??
          (kind === "text" ? this.#resumeInterruptedText(key) : undefined) ??
          this.#openStreamingPart(kind, key);
        part.text = (part.text as string) + (str(chunk.delta) ?? "");
        return;
      }
      case "text-end":
      case "reasoning-end": {
        const open = this.#openParts(type === "text-end" ? "text" : "reasoning");
        const key = str(chunk.id) ?? "";
        const part = open.get(key);
        if (part) part.state = "done";
        open.delete(key);
        return;
      }
      case "start-step":
      case "step-start":
        this.#push({ type: "step-start" });
        return;
      case "file":
      case "reasoning-file":
        this.#push({ type, mediaType: chunk.mediaType, url: chunk.url });
        return;
      case "source-url":
        this.#push({ type, sourceId: chunk.sourceId, url: chunk.url, title: chunk.title });
        return;
      case "source-document":
        this.#push({
          type,
          sourceId: chunk.sourceId,
          mediaType: chunk.mediaType,
          title: chunk.title,
          filename: chunk.filename
        });
        return;
      case "tool-input-start":
      case "tool-input-delta":
      case "tool-input-available":
      case "tool-input-error":
      case "tool-approval-request":
      case "tool-output-available":
      case "tool-output-error":
      case "tool-output-denied":
        this.#applyToolChunk(type, chunk);
        return;
      case "tool-approval-response":
        this.#applyApprovalResponse(chunk);
        return;
      default:
        if (type.startsWith("data-")) this.#applyDataChunk(type, chunk);
    }
  }

  #openParts(kind: "text" | "reasoning") {
    return kind === "text" ? this.#openText : this.#openReasoning;
  }

  #openStreamingPart(kind: "text" | "reasoning", key: string): Loose {
    const part: Loose = { type: kind, text: "", state: "streaming" };
    this.#openParts(kind).set(key, part);
    this.#push(part);
    return part;
  }

  /**
   * A continuation of a turn that was cut off (a server restart) extends the
   * text part that was still streaming: `AIChatAgent` drops the
   * continuation's first `text-start` then and appends its deltas to that
   * part, so a delta for a part this stream never opened lands there too.
   */
  #resumeInterruptedText(key: string): Loose | undefined {
    if (!this.continuation || this.#resumedText) return undefined;
    const last = this.parts.findLast((part) => part.type === "text") as Loose | undefined;
    if (last?.state !== "streaming") return undefined;
    this.#resumedText = true;
    this.#openText.set(key, last);
    return last;
  }

  #push(part: Loose): void {
    this.parts.push(part as Part);
  }

  #findTool(toolCallId: string): Loose | undefined {
    for (let i = this.parts.length - 1; i >= 0; i--) {
      const part = this.parts[i] as Loose;
      if (part.toolCallId === toolCallId) return part;
    }
    return undefined;
  }

  #applyToolChunk(type: string, chunk: Loose): void {
    const toolCallId = str(chunk.toolCallId);
    if (!toolCallId) return;
    let part = this.#findTool(toolCallId);
    const toolName = str(chunk.toolName);
    if (!part) {
      // A result for a call this message never saw belongs to another message.
      if (type.startsWith("tool-output") || type === "tool-approval-request") return;
      if (!toolName) return;
      part =
        chunk.dynamic === true
          ? { type: "dynamic-tool", toolName, toolCallId, state: "input-streaming", input: undefined }
          : { type: `tool-${toolName}`, toolCallId, state: "input-streaming", input: undefined };
      if (chunk.providerExecuted === true) part.providerExecuted = true;
      this.#push(part);
    }
    const settled = SETTLED_TOOL_STATES.has(part.state as string);
    switch (type) {
      case "tool-input-start":
        return;
      case "tool-input-delta": {
        if (settled || part.state !== "input-streaming") return;
        const text = (this.#inputText.get(toolCallId) ?? "") + (str(chunk.inputTextDelta) ?? "");
        this.#inputText.set(toolCallId, text);
        const partial = parsePartialInput(text);
        if (partial !== undefined) part.input = partial;
        return;
      }
      case "tool-input-available":
        if (settled) return;
        this.#inputText.delete(toolCallId);
        part.input = chunk.input;
        if (part.state === "input-streaming") part.state = "input-available";
        return;
      case "tool-input-error":
        if (settled) return;
        part.input = chunk.input;
        part.state = "output-error";
        part.errorText = str(chunk.errorText) ?? "";
        return;
      case "tool-approval-request":
        // A continuation replays the approval it continues from: an answered one is not asked again.
        if (settled || part.state === "approval-responded") return;
        part.state = "approval-requested";
        part.approval = requestedApproval(chunk);
        return;
      case "tool-output-available":
        if (part.state === "output-available" && part.preliminary !== true) return;
        part.state = "output-available";
        part.output = chunk.output;
        if (chunk.preliminary === true) part.preliminary = true;
        else delete part.preliminary;
        return;
      case "tool-output-error":
        if (settled) return;
        part.state = "output-error";
        part.errorText = str(chunk.errorText) ?? "";
        return;
      case "tool-output-denied":
        if (settled || part.state === "approval-responded") return;
        part.state = "output-denied";
        return;
    }
  }

  /**
   * An answer to an approval this stream asked for, by its id: the server
   * decided it (`isAutomatic`) or recorded the user's. As in the AI SDK, the
   * part is `approval-responded` and its approval gains `approved` and the
   * answer's `reason`; a settled part stays as it is.
   */
  #applyApprovalResponse(chunk: Loose): void {
    const approvalId = str(chunk.approvalId);
    if (!approvalId) return;
    const part = this.parts.findLast((candidate) => ((candidate as Loose).approval as Loose | undefined)?.id === approvalId) as Loose | undefined;
    if (!part || SETTLED_TOOL_STATES.has(part.state as string)) return;
    part.state = "approval-responded";
    part.approval = { ...(part.approval as Loose), ...defined({ approved: chunk.approved === true, reason: chunk.reason }) };
    Object.assign(part, defined({ providerExecuted: chunk.providerExecuted, callProviderMetadata: chunk.providerMetadata }));
  }

  #applyDataChunk(type: string, chunk: Loose): void {
    // Transient data parts are delivered to onData only, never stored.
    if (chunk.transient === true) return;
    const id = str(chunk.id);
    if (id !== undefined) {
      const existing = this.parts.find(
        (part) => part.type === type && (part as Loose).id === id
      ) as Loose | undefined;
      if (existing) {
        existing.data = chunk.data;
        return;
      }
    }
    this.#push(id === undefined ? { type, data: chunk.data } : { type, id, data: chunk.data });
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
    let index = messages[last]?.id === this.id ? last : messages.findIndex((message) => message.id === this.id);
    if (index < 0 && this.continuation) {
      index = messages.findLastIndex((message) => message.role === "assistant");
      // The message it continues was renamed by a transcript frame: take the server's id (issue 21, 6).
      if (index >= 0 && !this.#unseeded) this.id = (messages[index] as UIMessage).id;
    }
    if (this.#unseeded) {
      const queued = this.#unseeded;
      this.#unseeded = null;
      const target = index >= 0 ? messages[index] : undefined;
      this.parts = target ? target.parts.map((part) => ({ ...part })) : [];
      this.#seeded = this.parts.length;
      this.#metadata = isRecord(target?.metadata) ? { ...target.metadata } : undefined;
      if (target) this.id = target.id;
      this.#openText.clear();
      this.#openReasoning.clear();
      this.#resumedText = false;
      for (const chunk of queued) this.#applyChunk(chunk);
    }
    return this.#storedApart(messages, index);
  }

  /**
   * Rule (a continuation stored as its own message, issue 33): `AIChatAgent`
   * stores a tool or approval continuation in the message it extends; Think
   * stores it as a new assistant message right after that one (same frames on
   * the wire: a `start` without a `messageId`). Once a list shows such a
   * message, one this continuation's text extends or that extends it, the
   * continuation becomes that message: it gives the adopted parts back and
   * takes the stored id. Returns where the continuation now lands.
   */
  #storedApart(messages: readonly UIMessage[], index: number): number {
    if (!this.continuation || this.#seeded === 0 || index < 0 || messages[index]?.id !== this.id) return index;
    const next = messages[index + 1];
    if (!next || next.role !== "assistant") return index;
    const own = this.parts.slice(this.#seeded);
    let text = "";
    for (const part of own) if (part.type === "text") text += part.text;
    let stored = "";
    for (const part of next.parts) if (part.type === "text") stored += part.text;
    if (!text.startsWith(stored) && !stored.startsWith(text)) return index;
    this.parts = own;
    this.id = next.id;
    this.#seeded = 0;
    this.#named = true;
    return index + 1;
  }

  /** The message as it stands; the parts array is copied, the parts are live. */
  toMessage<M extends UIMessage>(): M {
    const message: Loose = { id: this.id, role: "assistant", parts: [...this.parts] };
    if (this.#metadata !== undefined) message.metadata = this.#metadata;
    return message as unknown as M;
  }

  /**
   * True when `messages` already hold this message with text this stream does
   * not extend: the stored copy is then authoritative (#2166).
   */
  divergesFrom(messages: readonly UIMessage[]): boolean {
    const existing = messages.find((message) => message.id === this.id);
    if (!existing) return false;
    let stored = "";
    for (const part of existing.parts) if (part.type === "text") stored += part.text;
    return !this.#text().startsWith(stored);
  }
}
