import type { UIMessage } from "ai";
import { isRecord } from "../frames";
import { moveToEnd } from "../transcript";
import { forgetOldest } from "./turns";

type Part<M extends UIMessage> = M["parts"][number];

/** The working transcript the AI SDK and the model write: `PublishingChatState` in the app, an array in tests. */
export interface WorkingList<M extends UIMessage> {
  messages: M[];
  replaceMessage(index: number, message: M): void;
  pushMessage(message: M): void;
}

/** A live local reply kept at the tail; `anchorId` null means "first", undefined "unknown". */
interface Protection {
  assistantId: string;
  anchorId: string | null | undefined;
}

/** The assistant message a continuation extends, and what it held before (#1229). */
interface Pin<M extends UIMessage> {
  /** The pinned message's id (it follows a broadcast that renames the message). */
  id: string;
  /** Its tool calls: how it is found again after a rename. */
  toolCallIds: ReadonlySet<string>;
  /** Per AI SDK response message: the pinned parts its chunks go after. */
  bases: Map<string, Array<Part<M>>>;
  /** The continuation extends the pinned message's interrupted text part. */
  resumesText?: boolean;
}

export function toolCallIdsOf(message: UIMessage): string[] {
  return message.parts.flatMap((part) => {
    const id = (part as { toolCallId?: unknown }).toolCallId;
    return typeof id === "string" && id ? [id] : [];
  });
}

/** The index of the message holding one of `toolCallIds` (-1: none, or no ids): a message the server renamed. */
export function indexByToolCalls(messages: readonly UIMessage[], toolCallIds: ReadonlySet<string>): number {
  if (toolCallIds.size === 0) return -1;
  return messages.findIndex((message) => toolCallIdsOf(message).some((id) => toolCallIds.has(id)));
}

/**
 * Where a reply this client streams lands: the live-reply overlay over
 * transcript frames, and the message a continuation extends.
 */
export class ReplyPlacement<M extends UIMessage> {
  #protection: Protection | null = null;
  pin: Pin<M> | null = null;
  /** Replies the server renamed after the AI SDK seeded them from an earlier assistant: parts to drop. */
  readonly #reseeded = new Map<string, number>();

  readonly #list: WorkingList<M>;
  constructor(list: WorkingList<M>) {
    this.#list = list;
  }

  get protectedId(): string | undefined {
    return this.#protection?.assistantId;
  }

  /**
   * Rule (live reply overlay, #1778 #2464): a transcript frame that lags
   * behind a reply streaming here keeps that reply at its tail, until the
   * frame shows the server moved past it.
   */
  keepLiveReply(snapshot: readonly M[], current: readonly M[]): M[] {
    const protection = this.#protection;
    if (!protection) return [...snapshot];
    const index = snapshot.findIndex((message) => message.id === protection.assistantId);
    if (index >= 0 && snapshot.slice(index + 1).some((message) => message.role === "assistant")) {
      this.#protection = null;
      return [...snapshot];
    }
    // Rule (live reply overlay): where the frame has the reply is where it goes back when it finishes.
    if (index >= 0) protection.anchorId = snapshot[index - 1]?.id ?? null;
    // A reply that started with nothing before it (a local setMessages emptied the screen), and a frame without it
    // that holds messages (another tab's list): the server stores the reply after that list, so it goes back there.
    else if (protection.anchorId === null && snapshot.length > 0) protection.anchorId = snapshot.at(-1)!.id;
    const live = current.find((message) => message.id === protection.assistantId) ?? snapshot[index];
    if (!live) return [...snapshot];
    return [...snapshot.filter((message) => message.id !== protection.assistantId), live];
  }

  /** Rule (a send keeps the streaming reply last): a send while a reply streams here keeps that reply at the tail. */
  protectStreamingTail(): void {
    const messages = this.#list.messages;
    const index = messages.findLastIndex((message) => message.role === "assistant");
    if (index < 0) return;
    const assistant = messages[index] as M;
    if (this.#protection?.assistantId !== assistant.id) {
      this.#protection = { assistantId: assistant.id, anchorId: messages[index - 1]?.id ?? null };
    }
    const moved = moveToEnd(messages, assistant.id);
    if (moved !== messages) this.#list.messages = moved;
  }

  /**
   * A local reply's `start` named it (or, `appended`, the AI SDK just appended
   * an unnamed one): protect it, anchored where it stands (unknown before the
   * transcript is in).
   */
  protect(assistantId: string, loading: boolean, appended = false): void {
    if (this.#protection?.assistantId === assistantId) return;
    const messages = this.#list.messages;
    const index = appended ? messages.length - 1 : messages.findIndex((message) => message.id === assistantId);
    const anchorId = loading ? undefined : index >= 0 ? (messages[index - 1]?.id ?? null) : (messages.at(-1)?.id ?? null);
    this.#protection = { assistantId, anchorId };
  }

  /**
   * Rule (a read lags the live reply): a read merged the transcript around the
   * reply streaming here. The reply keeps the place the merge gave it, and,
   * while the AI SDK still streams it (`streaming`), its live copy: the stored
   * one was taken before chunks this client already shows (the AI SDK writes
   * its own copy back on the next chunk anyway, and the stream's end reads
   * back what the server stored beyond it). A reply nothing streams any more
   * (a socket close cut it) takes the stored copy.
   */
  keepLiveCopy(merged: M[], current: readonly M[], streaming: boolean): M[] {
    const protection = this.#protection;
    const index = protection ? merged.findIndex((message) => message.id === protection.assistantId) : -1;
    if (!protection || index < 0) return merged;
    protection.anchorId = merged[index - 1]?.id ?? null;
    const live = streaming ? current.find((message) => message.id === protection.assistantId) : undefined;
    if (!live) return merged;
    const next = merged.slice();
    next[index] = live;
    return next;
  }

  /** Rule (a close ends the live reply overlay, #2464): the cut-off local copy must not win over later snapshots. */
  unprotect(): void {
    this.#protection = null;
  }

  /** Rule (the finished reply goes back after its anchor): once its turn ended, it leaves the tail. */
  release(assistantId: string | undefined): void {
    const protection = this.#protection;
    if (!protection || (assistantId !== undefined && protection.assistantId !== assistantId)) return;
    this.#protection = null;
    const messages = this.#list.messages;
    const from = messages.findIndex((message) => message.id === protection.assistantId);
    if (from < 0 || protection.anchorId === undefined) return;
    const next = messages.slice();
    const [message] = next.splice(from, 1);
    if (protection.anchorId === null) next.unshift(message as M);
    else {
      const anchor = next.findIndex((candidate) => candidate.id === protection.anchorId);
      next.splice(anchor >= 0 ? anchor + 1 : from, 0, message as M);
    }
    this.#list.messages = next;
  }

  /** Pins the last assistant message as the one a continuation extends. */
  pinLast(): void {
    if (this.pin) return;
    const last = this.#list.messages.at(-1);
    if (!last || last.role !== "assistant") return;
    this.pin = { id: last.id, toolCallIds: new Set(toolCallIdsOf(last)), bases: new Map() };
  }

  /** A recovery continuation dropped its `text-start`: its text extends the pinned message's interrupted part. */
  resumeText(): void {
    if (this.pin) this.pin.resumesText = true;
  }

  reset(): void {
    this.#protection = null;
    this.#reseeded.clear();
  }

  finished(messageId: string): void {
    this.#reseeded.delete(messageId);
  }

  /**
   * Places a message the AI SDK writes (`index` undefined: it would append).
   *
   * - Rule (continuation lands in place, #1229): a continuation's chunks carry
   *   no message id, and the AI SDK starts a fresh message for a resumed
   *   stream unless the last one awaits an approval, so its writes are merged
   *   into the pinned message.
   * - Rule (no seeded copy): a bare `sendMessage()` after a tool output makes
   *   the AI SDK seed the reply with the last assistant's parts, but
   *   `AIChatAgent` answers with a new turn under a new id that stores only
   *   the new parts; the seeded copy is dropped so the screen matches the store.
   * Returns whether it appended a message.
   */
  place(message: M, index?: number): boolean {
    let placed = message;
    const drop = this.#reseeded.get(message.id);
    if (drop !== undefined) {
      placed = { ...message, parts: message.parts.slice(drop) };
    } else if (this.pin && message.role === "assistant") {
      if (this.#mergeIntoPinned(this.pin, message, index)) return false;
    } else if (index === undefined) {
      const seeded = this.#seededParts(message);
      if (seeded > 0) {
        this.#reseeded.set(message.id, seeded);
        forgetOldest(this.#reseeded);
        placed = { ...message, parts: message.parts.slice(seeded) };
      }
    }
    if (index !== undefined) this.#list.replaceMessage(index, placed);
    else this.#list.pushMessage(placed);
    return index === undefined;
  }

  #mergeIntoPinned(pin: Pin<M>, message: M, index: number | undefined): boolean {
    // A replace of another message (e.g. an output added to an older call) is not the reply.
    if (index !== undefined && message.id !== pin.id) return false;
    const messages = this.#list.messages;
    let target = messages.findIndex((candidate) => candidate.id === pin.id);
    // A broadcast renamed the pinned message: find it by its tool calls.
    if (target < 0) target = indexByToolCalls(messages, pin.toolCallIds);
    const pinned = messages[target];
    if (!pinned) return false;
    pin.id = pinned.id;
    // The AI SDK resumed the pinned message itself (it awaited an approval): its parts are all there.
    const continuesPinned = toolCallIdsOf(message).some((id) => pin.toolCallIds.has(id));
    let base: Array<Part<M>> = [];
    if (!continuesPinned) {
      base = pin.bases.get(message.id) ?? pinned.parts;
      pin.bases.set(message.id, base);
    }
    const metadata =
      isRecord(pinned.metadata) && isRecord(message.metadata)
        ? { ...pinned.metadata, ...message.metadata }
        : (message.metadata ?? pinned.metadata);
    const parts = pin.resumesText && !continuesPinned ? joinResumedText(base, message.parts) : [...base, ...message.parts];
    this.#list.replaceMessage(target, { ...pinned, ...message, id: pinned.id, metadata, parts });
    return true;
  }

  /** How many leading parts of a new reply are a copy of the assistant before it. */
  #seededParts(message: M): number {
    if (message.role !== "assistant") return 0;
    const last = this.#list.messages.at(-1);
    if (!last || last.role !== "assistant" || last.id === message.id || last.parts.length === 0) return 0;
    if (message.parts.length < last.parts.length) return 0;
    return last.parts.every((part, i) => samePart(part, message.parts[i])) ? last.parts.length : 0;
  }
}

/**
 * The pinned parts followed by a continuation's, where the continuation's
 * first text part extends the pinned message's last text part when that one
 * was still streaming (the server appended the deltas there).
 */
function joinResumedText<P extends UIMessage["parts"][number]>(base: P[], added: P[]): P[] {
  const at = base.findLastIndex((part) => part.type === "text");
  const first = added.findIndex((part) => part.type === "text");
  const interrupted = base[at] as { type: "text"; text: string; state?: string } | undefined;
  const resumed = added[first] as { type: "text"; text: string; state?: string } | undefined;
  if (!interrupted || !resumed || interrupted.state !== "streaming") return [...base, ...added];
  const joined = { ...interrupted, text: interrupted.text + resumed.text, state: resumed.state } as P;
  return [...base.slice(0, at), joined, ...base.slice(at + 1), ...added.slice(0, first), ...added.slice(first + 1)];
}

/** Whether two parts are the same part (states may differ: a tool call may have been answered since). */
function samePart(a: UIMessage["parts"][number], b: UIMessage["parts"][number] | undefined): boolean {
  if (!b || a.type !== b.type) return false;
  const callA = (a as { toolCallId?: unknown }).toolCallId;
  if (callA !== undefined || (b as { toolCallId?: unknown }).toolCallId !== undefined) {
    return callA === (b as { toolCallId?: unknown }).toolCallId;
  }
  if (a.type === "text" || a.type === "reasoning") return a.text === (b as { text: string }).text;
  return true;
}
