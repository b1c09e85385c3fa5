import type { UIMessage } from "ai";
import type { PublishingChatState } from "./chat-state";
import type { ChatFrame } from "./frames";
import { readSafely } from "./load";
import type { ChatModel } from "./model";
import type { TranscriptRead } from "./model/base";
import { firstReadAnswered, readAnswered } from "./model/transcript-rules";
import type { SessionConfig } from "./settings";

/** The first pause before a failed read is made again (it doubles, up to 30 s). */
const RETRY_MS = 1000;
const pauseAfter = (failures: number) => Math.min(RETRY_MS * 2 ** failures, 30_000);

/** Agents (host and class) that sent a chat of this page their transcript as its socket connected (page state: the model's simulation starts each page without it). */
export const pushingAgents = new Set<string>();

/**
 * The session's transcript reads: the first load (and `isLoading`, `ready`)
 * and the reads the rules start (the `read` effect). What an answer does is
 * the model's (`firstReadAnswered`, `readAnswered`).
 */
export class TranscriptReads<M extends UIMessage> {
  readonly ready: Promise<void>;
  #resolveReady!: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The first load waits for a connect-time transcript: only a chat frame tells it none is coming. */
  #awaitsTranscript = false;
  /** First loads that failed in a row (see `#startFirstLoad`). */
  #failedLoads = 0;
  /** Reads that failed in a row, and the timer that makes the last one again, and how (see `start`). */
  #failedReads = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #retry: (() => void) | null = null;

  readonly #config: SessionConfig<M>;
  readonly #model: ChatModel<M>;
  readonly #state: PublishingChatState<M>;
  readonly #disposed: () => boolean;
  constructor(
    config: SessionConfig<M>,
    model: ChatModel<M>,
    state: PublishingChatState<M>,
    disposed: () => boolean
  ) {
    this.#config = config;
    this.#model = model;
    this.#state = state;
    this.#disposed = disposed;
    this.ready = new Promise((resolve) => (this.#resolveReady = resolve));
    config.cells.loading.value = !!config.loadOnOpen;
    if (!config.loadOnOpen) this.#resolveReady();
  }

  /**
   * Rule (first frame decides): the first load reads at once, unless this
   * agent sent a connect-time transcript to an earlier chat of this page: then
   * it waits for the socket's first chat frame on a socket that opened after
   * the chat (`openedBefore`: its connect-time frames went by before the chat
   * listened). A server silent for 250 ms sends none.
   */
  firstOpen(openedBefore: boolean): void {
    if (!this.#config.loadOnOpen) return;
    this.#model.base.firstLoad = "waiting";
    if (openedBefore || !pushingAgents.has(this.#config.agentKey ?? "")) return this.#startFirstLoad();
    this.#awaitsTranscript = true;
    this.#timer = setTimeout(() => this.#startFirstLoad(), 250);
  }

  /**
   * A socket frame arrived (`frame`: the chat frame it was, if any). The
   * connect-time transcript answers the first load; any other chat frame
   * says none is coming; any frame at all may come once the address is known.
   */
  frame(frame: ChatFrame<M> | undefined, answeredFirstLoad = false): void {
    const connect = frame?.kind === "messages" && frame.connect;
    if (connect) pushingAgents.add(this.#config.agentKey ?? "");
    if (answeredFirstLoad) this.#firstLoadDone();
    else if (!connect && this.#model.base.firstLoad === "waiting" && (frame || !this.#awaitsTranscript)) this.#startFirstLoad();
  }

  /** Rule (a replacement is the first load): a local replacement before the first read left is the transcript; nothing is read. */
  replaced(): void {
    if (this.#model.base.firstLoad !== "waiting") return;
    this.#model.base.firstLoad = "done";
    this.#firstLoadDone();
  }

  /** Whether a read can start now (`always`: also one only `resyncOnReconnect` asks for). */
  canRead(always: boolean): boolean {
    return this.#canRead && this.#config.readStored !== undefined && (always || this.#config.settings().resyncOnReconnect);
  }

  /** Reads the stored transcript for `read`, which the model started; its answer goes to `readAnswered`. */
  start(read: TranscriptRead): void {
    const reader = this.#config.readStored;
    if (!reader) return;
    const model = this.#model;
    const base = model.base;
    this.#cancelRetry();
    // A read made again after failures says nothing new when it fails too: one warning per run of failures.
    void readSafely(reader, this.#config.label, this.#failedReads > 0).then((stored) => {
      if (this.#disposed()) return;
      model.dispatch(() => readAnswered(model, read, stored));
      if (stored !== null) this.#failedReads = 0;
      // Rule (a failed read is made again): the newest read that got no answer is made again after a growing
      // pause, or at once when the socket opens again (the agent is back); a newer read takes its place.
      else if (read.id === base.newestRead) {
        this.#retry = () => base.newestRead === read.id && model.dispatch(() => model.read(read.always));
        this.#retryTimer = setTimeout(() => this.#retryNow(), pauseAfter(this.#failedReads++));
      }
    });
  }

  /** The socket opened: the agent may be back, so a failure from now on is a new run of failures (see `afterOpen`). */
  opened(): void {
    this.#failedReads = 0;
  }

  /**
   * The reads of an open, after its probe: the reconnect's own read (`read`), then a failed read waiting for its
   * pause, made again now unless that newer read took its place (one read, not two).
   */
  afterOpen(read: boolean): void {
    if (read) this.#model.read(false);
    this.#retryNow();
  }

  #retryNow(): void {
    const retry = this.#retry;
    this.#cancelRetry();
    retry?.();
  }

  #cancelRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retry = null;
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#cancelRetry();
  }

  /** Whether the readers know where to read: a shared socket may name its address only once it connected. */
  get #canRead(): boolean {
    return this.#config.canRead?.() !== false;
  }

  #startFirstLoad(): void {
    const load = this.#config.loadOnOpen;
    const base = this.#model.base;
    if (!load || base.firstLoad !== "waiting") return;
    clearTimeout(this.#timer);
    this.#awaitsTranscript = false;
    // Rule (the first read waits for the address, issue 21, 7): meanwhile the chat works as if the
    // history were empty; the next frame tries again, and a message sent meanwhile stays.
    if (!this.#canRead) return this.#firstLoadDone();
    this.#config.cells.loading.value = true;
    const read = (base.firstLoad = base.read(false));
    void readSafely(load, this.#config.label, this.#failedLoads > 0).then((stored) => {
      if (this.#disposed()) return;
      // A first load something else answered first still counts as a read (rule: an overtaken first load still checks).
      const current = base.firstLoad === read;
      if (this.#model.dispatch(() => firstReadAnswered(this.#model, read, stored))) return current && this.#firstLoadDone();
      // Rule (a failed first read is made again, `persist`): the next frame reads again, but an idle agent may send
      // none (the probe's answer came before the read failed), so with the socket open it is also made again after a
      // growing pause; a closed socket's reconnect brings frames.
      this.#timer = setTimeout(() => this.#model.link.open && this.#startFirstLoad(), pauseAfter(this.#failedLoads++));
    });
  }

  /** The history must be on screen before `isLoading` says it is. */
  #firstLoadDone(): void {
    this.#state.flush();
    this.#config.cells.loading.value = false;
    this.#resolveReady();
  }
}
