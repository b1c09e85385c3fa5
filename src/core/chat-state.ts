import type { ChatState, ChatStatus, UIMessage } from "ai";
import { withheldPublications } from "./publications";

/** The smallest reactive cell the core needs: Vue's `shallowRef` fits it. */
export interface Cell<T> {
  value: T;
}

/** Shallow copy of a message and its parts: what a render may keep. */
export function snapshotMessage<T>(value: T): T {
  if (typeof value !== "object" || value === null || !Array.isArray((value as { parts?: unknown }).parts)) {
    return value;
  }
  const message = value as unknown as UIMessage;
  const copy = { ...message, parts: message.parts.map((part) => ({ ...part })) };
  return copy as T;
}

export interface PublishingChatStateOptions<M extends UIMessage> {
  initialMessages: M[];
  messages: Cell<M[]>;
  status: Cell<ChatStatus>;
  error: Cell<Error | undefined>;
  /** Milliseconds between message publications while a stream runs; `0`/`undefined` publishes every change. */
  throttleMs?: number;
  /** Applied to each message copy as it is published (the client tool-result overlay). */
  decorate?: (message: M) => M;
  /** Called after any change: `"messages"` for the transcript, `"status"` for status or error. */
  onChange?: (kind: "messages" | "status") => void;
  /** Where the AI SDK's queue (`experimental_queue`) is published, at once, each time it changes. */
  queued?: Cell<M[]>;
}

/**
 * The chat state behind `AbstractChat`. The AI SDK mutates the streaming
 * message in place and reports every chunk; this state keeps that working
 * array private and publishes into shallow cells:
 * - a published message is a copy, so the AI SDK's later mutations never leak
 *   into what a component rendered;
 * - unchanged messages keep their published identity, so a long transcript
 *   costs nothing per chunk;
 * - publications are throttled (leading edge, then at most one per interval),
 *   while `status` and `error` are never delayed, and messages are flushed
 *   before a terminal status becomes visible.
 */
export class PublishingChatState<M extends UIMessage> implements ChatState<M> {
  #working: M[];
  #published: M[] = [];
  #publishedSources: M[] = [];
  readonly #dirty = new Set<number>();
  #tail: readonly M[] = [];
  #statusValue: ChatStatus = "ready";
  #errorValue: Error | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pending = false;
  #active = true;
  readonly #throttleMs: number | undefined;
  readonly #cells: Pick<PublishingChatStateOptions<M>, "messages" | "status" | "error">;
  readonly #decorate: ((message: M) => M) | undefined;
  readonly #onChange: ((kind: "messages" | "status") => void) | undefined;
  #queue: M[] = [];
  readonly #queueCell: Cell<M[]> | undefined;

  constructor(options: PublishingChatStateOptions<M>) {
    this.#working = options.initialMessages;
    this.#cells = options;
    this.#decorate = options.decorate;
    this.#onChange = options.onChange;
    this.#queueCell = options.queued;
    if (this.#queueCell) this.#queueCell.value = [];
    const ms = options.throttleMs;
    this.#throttleMs = ms !== undefined && Number.isFinite(ms) && ms > 0 ? ms : undefined;
    this.#publishNow();
    options.status.value = this.#statusValue;
    options.error.value = this.#errorValue;
  }

  get messages(): M[] {
    return this.#working;
  }

  set messages(next: M[]) {
    const previous = this.#working;
    this.#working = next;
    for (let index = 0; index < next.length; index++) {
      if (next[index] !== previous[index]) this.#dirty.add(index);
    }
    this.#changed();
  }

  pushMessage = (message: M): void => {
    this.#working.push(message);
    this.#dirty.add(this.#working.length - 1);
    this.#changed();
  };

  popMessage = (): void => {
    this.#working.pop();
    this.#changed();
  };

  replaceMessage = (index: number, message: M): void => {
    this.#working[index] = message;
    this.#dirty.add(index);
    this.#changed();
  };

  snapshot = snapshotMessage;

  /**
   * The AI SDK's queue (`experimental_queue`), kept here so a change reaches
   * `experimental_queuedMessages` at once (a state without it keeps the queue
   * in the chat, unseen).
   */
  get experimental_queuedMessages(): M[] {
    return this.#queue;
  }

  set experimental_queuedMessages(queue: M[]) {
    this.#queue = queue;
    if (this.#active && this.#queueCell) this.#queueCell.value = [...queue];
  }

  get status(): ChatStatus {
    return this.#statusValue;
  }

  set status(status: ChatStatus) {
    this.#statusValue = status;
    if (!this.#active) return;
    // A terminal status must never be visible before the final message is.
    if (status === "ready" || status === "error") this.flush();
    this.#cells.status.value = status;
    this.#onChange?.("status");
  }

  get error(): Error | undefined {
    return this.#errorValue;
  }

  set error(error: Error | undefined) {
    this.#errorValue = error;
    if (!this.#active) return;
    this.#cells.error.value = error;
    this.#onChange?.("status");
  }

  /** Marks messages for re-publication, e.g. when the decoration changed for them. */
  invalidate(predicate: (message: M) => boolean): void {
    let any = false;
    this.#working.forEach((message, index) => {
      if (predicate(message)) {
        this.#dirty.add(index);
        any = true;
      }
    });
    if (any) this.#schedule();
  }

  /**
   * Messages shown after the working ones without being part of the chat the
   * AI SDK sends: sends queued while the socket is down.
   */
  setTail(tail: readonly M[]): void {
    this.#tail = tail;
    this.flush();
  }

  /** Publishes pending changes now, cancelling the throttle window. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#setPending(false);
    this.#publishNow();
  }

  /** Whether a change waits for the throttle window to end (see `publications.ts`). */
  #setPending(pending: boolean): void {
    if (pending === this.#pending) return;
    this.#pending = pending;
    withheldPublications(pending ? 1 : -1);
  }

  /** Stops publishing and releases the timer; the cells keep their last values. */
  dispose(): void {
    this.#active = false;
    // Inactive, the flush only releases the timer: it publishes nothing.
    this.flush();
    this.#dirty.clear();
  }

  #changed(): void {
    this.#schedule();
    this.#onChange?.("messages");
  }

  #schedule(): void {
    if (!this.#active) return;
    if (this.#throttleMs === undefined) {
      this.#publishNow();
      return;
    }
    if (this.#timer === undefined) {
      this.#publishNow();
      this.#timer = setTimeout(this.#windowEnded, this.#throttleMs);
    } else {
      this.#setPending(true);
    }
  }

  readonly #windowEnded = (): void => {
    this.#timer = undefined;
    if (!this.#active || !this.#pending) return;
    this.#setPending(false);
    this.#publishNow();
    this.#timer = setTimeout(this.#windowEnded, this.#throttleMs);
  };

  #publishNow(): void {
    if (!this.#active) return;
    const working = this.#working;
    const next: M[] = [];
    let changed = working.length + this.#tail.length !== this.#published.length;
    for (let index = 0; index < working.length; index++) {
      const message = working[index] as M;
      if (!this.#dirty.has(index) && this.#publishedSources[index] === message) {
        next.push(this.#published[index] as M);
        continue;
      }
      const copy = snapshotMessage(message);
      next.push(this.#decorate ? this.#decorate(copy) : copy);
      changed = true;
    }
    this.#dirty.clear();
    this.#publishedSources = working.slice();
    for (let index = 0; index < this.#tail.length; index++) {
      const queued = this.#tail[index] as M;
      if (this.#published[working.length + index] !== queued) changed = true;
      next.push(queued);
    }
    if (!changed) return;
    this.#published = next;
    this.#cells.messages.value = next;
  }
}

/**
 * The chat state as the AI SDK sees it: `state`, except that the messages it
 * writes while a reply streams go through `place` (a continuation lands in
 * the message it continues).
 */
export function placedChatState<M extends UIMessage>(
  state: PublishingChatState<M>,
  place: (message: M, index?: number) => void
): ChatState<M> {
  return {
    get status() {
      return state.status;
    },
    set status(status: ChatStatus) {
      state.status = status;
    },
    get error() {
      return state.error;
    },
    set error(error: Error | undefined) {
      state.error = error;
    },
    get messages() {
      return state.messages;
    },
    set messages(next: M[]) {
      state.messages = next;
    },
    get experimental_queuedMessages() {
      return state.experimental_queuedMessages;
    },
    set experimental_queuedMessages(queue: M[]) {
      state.experimental_queuedMessages = queue;
    },
    pushMessage: (message: M) => place(message),
    popMessage: () => state.popMessage(),
    replaceMessage: (index: number, message: M) => place(message, index),
    snapshot: state.snapshot
  };
}
