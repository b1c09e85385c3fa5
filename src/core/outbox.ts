import type { AbstractChat, ChatRequestOptions, CreateUIMessage, UIMessage } from "ai";
import type { PublishingChatState } from "./chat-state";
import type { ChatModel } from "./model";
import type { QueuedSend } from "./model/intents";
import type { ConversationStore } from "./persistence";
import { toUserMessage } from "./requests";
import type { SessionConfig } from "./settings";
import { errorText } from "./tools";

type SendInput<M extends UIMessage> = NonNullable<Parameters<AbstractChat<M>["sendMessage"]>[0]>;

/** What the outbox needs from the session around it. */
export interface OutboxHost<M extends UIMessage> {
  readonly config: SessionConfig<M>;
  readonly model: ChatModel<M>;
  readonly state: PublishingChatState<M>;
  readonly chat: () => AbstractChat<M>;
  /** The probe's grace ran out with sends waiting: its resume is given up so they can go. */
  readonly endProbeHold: () => void;
  readonly reconcile: () => void;
  readonly disposed: () => boolean;
}

/**
 * Sends that wait for the connection (rule: `ChatModel.mustQueue`), and the conversation's durable copy when
 * `persist` is on: queued sends are stored when queued and forgotten once they settle, so the next page of the
 * conversation (or another tab) sends what this one could not.
 */
export class Outbox<M extends UIMessage> {
  /** The conversation's durable copy (`persist`). */
  readonly store: ConversationStore<M> | undefined;
  readonly #host: OutboxHost<M>;
  /** Wakes the outbox when a probe's grace ends (PROBE_GRACE_MS). */
  #graceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(host: OutboxHost<M>, showCached: (messages: M[]) => void) {
    this.#host = host;
    this.store = this.#open(showCached);
  }

  #open(showCached: (messages: M[]) => void): ConversationStore<M> | undefined {
    const { persist, persistKey, label } = this.#host.config;
    if (!persist || persistKey === undefined) return undefined;
    try {
      return persist.open<M>(persistKey, { showCached, adopt: (messages) => this.#adopt(messages) });
    } catch (error) {
      console.warn(`[agents-vue] persist: could not open the stored copy of ${label}:`, errorText(error));
      return undefined;
    }
  }

  /** Sends another page of this conversation stored and never delivered join the queue, ahead of this page's. */
  #adopt(messages: M[]): void {
    if (this.#host.disposed() || !Array.isArray(messages) || !this.#host.model.adopt(messages)) return;
    this.publish();
    this.#host.reconcile();
  }

  /** Queues a send; it settles once delivered or dropped. */
  async enqueue(input: SendInput<M>, options: ChatRequestOptions | undefined): Promise<void> {
    const message = await toUserMessage<M>(input, this.#host.config.chatInit.generateId);
    if (this.#host.disposed()) return;
    return new Promise<void>((settle) => {
      this.#host.model.intents.queued.push({ message, options, settle });
      this.store?.queued(message);
      this.publish();
      this.#host.reconcile();
    });
  }

  /** The queue shows in `queuedMessages` and after the transcript. */
  publish(): void {
    const queued = this.#host.model.intents.queued.map((entry) => entry.message);
    this.#host.config.cells.queued.value = queued;
    this.#host.state.setTail(queued);
  }

  /** Sends the next queued message when the rules allow (runs with the reconcile pass). */
  flush(): void {
    const { model, reconcile } = this.#host;
    if (model.probeHoldsQueue()) {
      const left = model.probeGraceLeft(Date.now());
      if (left > 0) return void (this.#graceTimer ??= setTimeout(() => ((this.#graceTimer = null), reconcile()), left));
      return this.#host.endProbeHold();
    }
    for (const entry of model.takeDelivered()) this.#settle(entry);
    const entry = model.nextQueued();
    if (!entry) return;
    model.intents.sending = true;
    this.publish();
    void this.#host
      .chat()
      .sendMessage(entry.message as unknown as CreateUIMessage<M>, entry.options)
      .finally(() => {
        model.intents.sending = false;
        this.#settle(entry, false);
        reconcile();
      });
  }

  /** Rule (a clear empties the outbox): the sends it dropped settle unsent, and the stored sends no live page owns go. */
  cleared(dropped: Array<QueuedSend<M>>): void {
    this.store?.cleared?.();
    for (const entry of dropped) this.#settle(entry, false);
    if (dropped.length > 0) this.publish();
  }

  #settle(entry: QueuedSend<M>, publish = true): void {
    entry.settle();
    this.store?.done(entry.message.id);
    if (publish) this.publish();
  }

  /** The socket closed for good: what still waits is said once. */
  closedForGood(warn: (key: string, message: string) => void): void {
    const queued = this.#host.model.intents.queued.length;
    if (queued > 0) warn("outbox", `${queued} message(s) wait for ${this.#host.config.label}, whose connection closed for good; they stay queued until it reconnects.`);
  }

  /** The chat closes: with `persist` the queue stays stored for the next page; without it, it is said lost. Returns the sends to settle last. */
  dispose(): Array<QueuedSend<M>> {
    clearTimeout(this.#graceTimer ?? undefined);
    const queued = this.#host.model.intents.queued.splice(0);
    this.store?.close();
    if (queued.length > 0 && !this.store) {
      console.warn(`[agents-vue] ${queued.length} queued message(s) for ${this.#host.config.label} were not sent: the chat closed before the connection came back.`);
    }
    return queued;
  }
}
