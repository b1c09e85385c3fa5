import { type AbstractChat, type ChatRequestOptions, type UIMessage, createIdGenerator } from "ai";
import type { PublishingChatState } from "./chat-state";
import type { ChatModel } from "./model";
import { launched, requested, settled } from "./model/continuation";
import { reconnectProbe } from "./model/resume-rules";
import type { SessionSettings } from "./settings";

/** Idle probes use longer ids than the transport's 8-character probes, as upstream does. */
export const probeIds = createIdGenerator({ size: 21 });

/** What the resumes need from the session around them. */
export interface ResumeHost<M extends UIMessage> {
  readonly model: ChatModel<M>;
  readonly state: PublishingChatState<M>;
  readonly chat: () => AbstractChat<M>;
  readonly settings: () => SessionSettings<M>;
  /** The continuation is about to attach: the transport expects a tool continuation's stream. */
  readonly expectContinuation: () => void;
  readonly reconcile: () => void;
  readonly disposed: () => boolean;
}

/**
 * The AI SDK resumes a session runs: the reconnect probe, `resumeStream()` and the tool continuation's attach,
 * one at a time, with the error a resume started from.
 */
export class Resumes<M extends UIMessage> {
  readonly #host: ResumeHost<M>;
  /** The AI SDK resume every caller shares (#1837). */
  #operation: Promise<void> | null = null;
  /** The error a resume started from; put back if it finds nothing (issue 21, 5). */
  #keptError: Error | undefined;
  #continuationTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(host: ResumeHost<M>) {
    this.#host = host;
  }

  /** An AI SDK resume runs. */
  get running(): boolean {
    return this.#operation !== null;
  }

  /** The error a running resume would put back no longer applies (cleared, a stream attached, the probe given up). */
  forgetError(): void {
    this.#keptError = undefined;
  }

  /** Rule (one resume at a time, #1837): every caller shares the running AI SDK resume. */
  resume(options?: ChatRequestOptions): Promise<void> {
    if (this.#operation) return this.#operation;
    const { state, model } = this.#host;
    const error = state.status === "error" ? state.error : undefined;
    // Rule (a cut is not a failure): a request the close cut off ends as the reconnect finds it, resumed or stored, not as an error.
    this.#keptError = model.turns.isCut(error) ? undefined : error;
    const operation: Promise<void> = this.#host
      .chat()
      .resumeStream(options)
      .finally(() => {
        if (this.#operation !== operation || this.#host.disposed()) return;
        this.#operation = null;
        // Rule (a probe that finds nothing keeps the error): as upstream, until it is cleared or a request starts.
        const kept = this.#keptError;
        if (kept && state.status === "ready" && state.error === undefined) {
          state.error = kept;
          state.status = "error";
        }
        // An open edge that arrived while this ran is retried, not lost.
        this.probeAfterReconnect();
        this.#host.reconcile();
      });
    this.#operation = operation;
    return operation;
  }

  /** Rule (reconnect probe): a reopened socket asks what still runs, through the AI SDK resume when it may. */
  probeAfterReconnect(): void {
    if (!this.#host.disposed() && reconnectProbe(this.#host.model, probeIds) === "resume") void this.resume().catch(() => {});
  }

  /** A tool output or approval asks the server to continue the turn (with `autoContinueAfterToolResult`). */
  requestContinuation(): void {
    if (!this.#host.settings().autoContinueAfterToolResult) return;
    this.#host.model.continuation = requested(this.#host.model.continuation);
    this.launchContinuation();
  }

  /** Rule (continuation probe): once the chat is ready, the AI SDK resume attaches to the continuation. */
  launchContinuation(): void {
    const { model, state } = this.#host;
    if (model.continuation.kind !== "scheduled" || state.status !== "ready" || this.#continuationTimer) return;
    const timer = setTimeout(async () => {
      // A resume may still own the AI SDK's active response.
      while (this.#operation) await this.#operation.catch(() => {});
      if (this.#continuationTimer === timer) this.#continuationTimer = null;
      const c = model.continuation;
      if (this.#host.disposed() || c.kind !== "scheduled" || state.status !== "ready") return;
      model.continuation = launched(c);
      model.placement.pinLast();
      this.#host.expectContinuation();
      await this.resume()
        .catch((error: unknown) => console.error("[agents-vue] Tool continuation failed:", error))
        .finally(() => {
          model.continuation = settled(model.continuation, c.token);
          this.#host.reconcile();
        });
    }, 0);
    this.#continuationTimer = timer;
  }

  dispose(): void {
    this.#operation = null;
    clearTimeout(this.#continuationTimer ?? undefined);
  }
}
