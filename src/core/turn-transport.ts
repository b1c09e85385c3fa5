import { type ChatTransport, type UIMessage, type UIMessageChunk, createIdGenerator } from "ai";
import * as CHAT_MESSAGE_TYPES from "./frame-types";
import { type ResponseFrame, chunkOf } from "./frames";
import type { HandshakeAnswer } from "./model";
import type { Turns } from "./model/turns";
import { TurnStream } from "./turn-stream";

/** Request and probe ids, as short as upstream's. */
export const requestIds = createIdGenerator({ size: 8 });

/** How long a resume probe waits for an answer the server should give at once. */
const PROBE_TIMEOUT_MS = 5_000;
/** How long it waits once the server said a turn is pending and will start (#1784), refreshed by each such word. */
const PENDING_TIMEOUT_MS = 60_000;

/** What a request asks the session for its body. */
export interface RequestShape<M extends UIMessage> {
  messages: M[];
  trigger: "submit-message" | "regenerate-message";
  messageId?: string;
}

/** What the transport needs from the session around it. */
export interface TransportHost<M extends UIMessage> {
  /** Sends a frame on the socket: false when the socket buffered it (not open). */
  send(data: string): boolean | void;
  /** The extra fields of a request's body. */
  prepareBody(request: RequestShape<M>): Promise<Record<string, unknown>>;
  /** A request of this client's goes out now, carrying `sentId` as its newest user message. */
  requestGoesOut(id: string, sentId: string | undefined): void;
  /** A submit went into the socket's buffer: the server has not seen its message yet (#1983). */
  buffered(messageId: string): void;
  /** A resume starts its handshake with probe `probeId` (the model sends the probe; its answer comes to `answer`). */
  startHandshake(probeId: string, continuation: boolean): void;
  /** The handshake of `probeId` got no answer in time. */
  timedOut(probeId: string): void;
  /** The AI SDK let go of the waiting handshake (a continuation stopped or cut before its offer). */
  handshakeDropped(): void;
  /** The chat's turns: who follows each, the one a stop cancels, continuation chunks applied (#1951). */
  readonly turns: Turns;
  cancelOnClientAbort(): boolean;
}

/** How a turn the transport renders ends here. */
interface Ending {
  /** The server turn was cancelled with it: the turn stays this client's until its end comes (see `Turns.released`). */
  keepId?: boolean;
  /** Forget the turn as the one a stop cancels (not when it runs on without this stream). */
  clearActive?: boolean;
}

/** A turn whose chunks the transport hands the AI SDK: a request, a resumed stream, or a tool continuation. */
interface Followed {
  kind: "request" | "resume" | "continuation";
  /** The server's request id; a continuation learns it from the offer. */
  id: string | null;
  stream: TurnStream;
  /** Parts left open by the replayed chunks dropped as applied: opened again before the next new chunk (#1951). */
  reopen?: Map<string, UIMessageChunk>;
  done: boolean;
}

/** The AI SDK's side of the resume handshake the model waits on (one at a time). */
interface Handshake {
  probeId: string;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** What an offer or "none" does. */
  settle(answer: { kind: "offer"; id: string } | { kind: "none" }): void;
}

/**
 * The chat's transport, owned by the session: the AI SDK's `ChatTransport`
 * over the session's socket, and nothing more. It sends requests and
 * cancels, and holds the streams the AI SDK reads; the session hands it the
 * frames of the turns it renders, already decoded (no second parse, no frame
 * strings made to be parsed again). What a turn is and how the resume
 * handshake goes is the model's (`model/turns.ts`, `model/resume-rules.ts`);
 * the transport performs the answers (`answer`). On the wire it speaks
 * upstream's protocol byte for byte: `AIChatAgent`, Think and
 * `orderTranscript` cannot tell it from upstream's `WebSocketChatTransport`.
 */
export class TurnTransport<M extends UIMessage> implements ChatTransport<M> {
  readonly #host: TransportHost<M>;
  /** The turns whose chunks go to the AI SDK, by request id. */
  readonly #followed = new Map<string, Followed>();
  #handshake: Handshake | null = null;
  /** The next resume attaches to a tool continuation (a deferred stream, so the status is `submitted` at once). */
  #expectContinuation = false;
  /** The tool continuation's stream, until it ends. */
  #continuation: Followed | null = null;
  /** The stream the last resume attached to, until it ends: let go locally when the chat resets. */
  #resumed: Followed | null = null;

  constructor(host: TransportHost<M>) {
    this.#host = host;
  }

  /** A frame of a turn the transport renders: chunks go to its stream; an error or `done` ends it. */
  deliver(frame: ResponseFrame): void {
    const followed = this.#followed.get(frame.id);
    if (!followed) return;
    const resumed = followed.kind !== "request";
    const applied = this.#host.turns.applied;
    if (frame.error) {
      if (resumed) applied.forget(frame.id);
      return this.#end(followed, (stream) => stream.fail(frame.body || "Stream error"));
    }
    if (resumed) this.#throughReplayFilter(followed, frame);
    else followed.stream.push(frame);
    if (!frame.done) return;
    if (resumed) applied.forget(frame.id);
    this.#end(followed, (stream) => stream.end());
  }

  /** Sends a chunk to the stream of `id` (see `TurnStream.enqueue`). */
  enqueue(id: string, chunk: UIMessageChunk): void {
    this.#followed.get(id)?.stream.enqueue(chunk);
  }

  /** Rule (a superseded request's failure is not the chat's): the stream of `id` just ends. */
  endQuietly(id: string): void {
    const followed = this.#followed.get(id);
    if (followed) this.#end(followed, (stream) => stream.end());
  }

  /**
   * Rule (applied continuation chunks are dropped, #1951): a continuation's replay after a reconnect repeats
   * chunks this client applied live; those go (by `seq`). A part they leave open is opened again before the
   * next new chunk, so its deltas have a part to land in.
   */
  #throughReplayFilter(followed: Followed, frame: ResponseFrame): void {
    const applied = this.#host.turns.applied;
    if (applied.isAppliedReplay(frame.id, frame)) {
      const chunk = chunkOf(frame) as { type?: string; id?: string; toolCallId?: string } | undefined;
      const open = (followed.reopen ??= new Map());
      const type = chunk?.type;
      if (type === "text-start" || type === "reasoning-start") open.set(`${type}:${chunk!.id}`, chunk as UIMessageChunk);
      else if (type === "text-end" || type === "reasoning-end") open.delete(`${type.slice(0, -3)}start:${chunk!.id}`);
      else if (type === "tool-input-start") open.set(`tool:${chunk!.toolCallId}`, chunk as UIMessageChunk);
      else if (type === "tool-input-available" || type === "tool-input-error") open.delete(`tool:${chunk!.toolCallId}`);
      if (frame.replayComplete) followed.stream.flush();
      return;
    }
    applied.record(frame.id, frame.seq);
    const reopen = followed.reopen;
    if (reopen?.size && frame.body.trim()) {
      for (const chunk of reopen.values()) followed.stream.reopen(chunk, frame.replay);
      reopen.clear();
    }
    followed.stream.push(frame);
  }

  /** Rule (a close interrupts the turn): a socket that had opened closed; no turn's end will reach these streams. */
  closed(): void {
    for (const followed of this.#followed.values()) this.#end(followed, (stream) => stream.interrupt(), { clearActive: false });
    // Before its offer a continuation has no server turn to interrupt: it ends, and the next open probes again.
    const waiting = this.#continuation;
    if (waiting && waiting.id === null) this.#end(waiting, (stream) => stream.end());
  }

  /** Drops the waiting handshake without an answer (its continuation's stream ended before the offer). */
  #dropHandshake(): void {
    const handshake = this.#handshake;
    if (!handshake) return;
    clearTimeout(handshake.timer);
    this.#handshake = null;
    this.#host.handshakeDropped();
  }

  /** Cancels the active server turn (and a tool continuation), whatever `cancelOnClientAbort` says. */
  cancelActiveServerTurn(): boolean {
    const turns = this.#host.turns;
    const active = turns.active;
    if (active !== null) {
      this.#sendCancel(active);
      const followed = this.#followed.get(active);
      if (followed && followed.kind !== "continuation") this.#end(followed, (stream) => stream.abort(), { keepId: true });
      if (turns.active === active) turns.active = null;
    }
    return this.abortActiveToolContinuation() || active !== null;
  }

  /** Aborts the tool continuation's stream, cancelling its server turn once it has one. */
  abortActiveToolContinuation(): boolean {
    const continuation = this.#continuation;
    if (!continuation) return false;
    if (continuation.id !== null) this.#sendCancel(continuation.id);
    this.#end(continuation, (stream) => stream.abort(), { keepId: continuation.id !== null });
    return true;
  }

  /** The next `reconnectToStream` attaches to a server-started tool continuation. */
  expectToolContinuation(): void {
    this.#expectContinuation = true;
  }

  /**
   * Performs the model's answer to the waiting handshake: an offer becomes the stream the AI SDK resume reads
   * (or names the continuation's turn), "none" resolves it empty; "pending" and "retry" wait longer.
   */
  answer(answer: HandshakeAnswer): void {
    const handshake = this.#handshake;
    if (!handshake) return;
    if (answer.kind === "pending" || answer.kind === "retry") return this.#arm(handshake, answer.kind === "pending" ? PENDING_TIMEOUT_MS : PROBE_TIMEOUT_MS);
    clearTimeout(handshake.timer);
    this.#handshake = null;
    handshake.settle(answer);
  }

  /** Lets go of every resume locally: the waiting handshake ends empty, the resumed stream ends as it stands. */
  letGo(): void {
    this.#expectContinuation = false;
    this.answer({ kind: "none" });
    const resumed = this.#resumed;
    if (resumed) this.#end(resumed, (stream) => stream.end());
  }

  #sendCancel(id: string): void {
    try {
      this.#host.send(JSON.stringify({ id, type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL }));
    } catch {
      // The socket is gone; the turn runs on without this client.
    }
  }

  /** Starts rendering into a new stream; `cancelled` runs when the AI SDK lets go of it. */
  #follow(kind: Followed["kind"], id: string | null, cancelled: (followed: Followed) => void): Followed {
    const followed: Followed = { kind, id, stream: new TurnStream(() => cancelled(followed)), done: false };
    if (id !== null) this.#followed.set(id, followed);
    return followed;
  }

  /** Ends a followed turn's stream once: `action` is its last word; a continuation is never the active turn. */
  #end(followed: Followed, action: (stream: TurnStream) => void, { keepId = false, clearActive = true }: Ending = {}): void {
    if (followed.done) return;
    followed.done = true;
    const id = followed.id;
    if (id !== null && this.#followed.get(id) === followed) this.#followed.delete(id);
    if (this.#resumed === followed) this.#resumed = null;
    if (this.#continuation === followed) this.#continuation = null;
    if (followed.kind === "continuation" && id === null) this.#dropHandshake();
    const turns = this.#host.turns;
    if (clearActive && id !== null && followed.kind !== "continuation" && turns.active === id) turns.active = null;
    action(followed.stream);
    if (id !== null) turns.released(id, keepId);
  }

  /** Rule (a local abort keeps the server turn, unless `cancelOnClientAbort`): the turn runs on and can be resumed. */
  #letGo(followed: Followed & { id: string }, sent: boolean): void {
    if (followed.done) return;
    if (this.#host.cancelOnClientAbort()) {
      if (sent) this.#sendCancel(followed.id);
      this.#end(followed, (stream) => stream.abort(), { keepId: sent });
    } else this.#end(followed, (stream) => stream.abort(), { clearActive: !sent });
  }

  /** Sends a chat request; its stream carries the reply. */
  async sendMessages(options: Parameters<ChatTransport<M>["sendMessages"]>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const host = this.#host;
    const id = requestIds();
    const request: RequestShape<M> = { messages: options.messages, trigger: options.trigger, messageId: options.messageId };
    const extra = { ...(await host.prepareBody(request)), ...(options.body as Record<string, unknown> | undefined) };
    const body = JSON.stringify({ messages: options.messages, trigger: options.trigger, ...extra });
    host.turns.followed(id, "request");
    let sent = false;
    const followed = this.#follow("request", id, () => this.#letGo(followed, sent)) as Followed & { id: string };
    const signal = options.abortSignal;
    const abort = () => this.#letGo(followed, sent);
    signal?.addEventListener("abort", abort, { once: true });
    if (signal?.aborted) abort();
    if (followed.done) return followed.stream.readable;
    sent = true;
    const sentId = options.messages.findLast((message) => message.role === "user")?.id;
    host.requestGoesOut(id, sentId);
    const frame = { id, init: { method: "POST", body }, type: CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST };
    if (host.send(JSON.stringify(frame)) === false && options.trigger === "submit-message" && sentId !== undefined) host.buffered(sentId);
    return followed.stream.readable;
  }

  /**
   * Rule (one handshake at a time): the AI SDK resume. A tool continuation gets a deferred stream at once (the
   * status is `submitted` while the server starts it); otherwise a probe asks what runs, and the stream of an
   * offer the model takes resolves it, nothing or no answer resolves null.
   */
  async reconnectToStream(): Promise<ReadableStream<UIMessageChunk> | null> {
    if (this.#handshake) return null;
    if (this.#expectContinuation) {
      this.#expectContinuation = false;
      return this.#continuationStream();
    }
    return new Promise((resolve) => {
      this.#startHandshake(false, (answer) => {
        if (answer.kind === "none") return resolve(null);
        const id = answer.id;
        const followed = this.#follow("resume", id, (self) => {
          if (this.#host.cancelOnClientAbort()) {
            this.#sendCancel(id);
            this.#end(self, () => {}, { keepId: true });
          } else this.#end(self, () => {}, { clearActive: false });
        });
        this.#resumed = followed;
        resolve(followed.stream.readable);
      });
    });
  }

  #startHandshake(continuation: boolean, settle: Handshake["settle"]): void {
    const handshake: Handshake = { probeId: requestIds(), timer: undefined, settle };
    this.#handshake = handshake;
    this.#arm(handshake, PROBE_TIMEOUT_MS);
    this.#host.startHandshake(handshake.probeId, continuation);
  }

  /** (Re)starts the handshake's backstop: without an answer by then, it resolves empty. */
  #arm(handshake: Handshake, ms: number): void {
    clearTimeout(handshake.timer);
    handshake.timer = setTimeout(() => this.#host.timedOut(handshake.probeId), ms);
  }

  /**
   * The deferred stream of a tool continuation: its probe goes out at once; the offer names its turn (rendered,
   * but not the turn a stop cancels: `abortActiveToolContinuation` is); "none", no answer, or a close before
   * the offer end it quietly.
   */
  #continuationStream(): ReadableStream<UIMessageChunk> {
    const followed = this.#follow("continuation", null, (self) => {
      const id = self.id;
      if (id !== null && this.#host.cancelOnClientAbort()) {
        this.#sendCancel(id);
        this.#end(self, () => {}, { keepId: true });
      } else this.#end(self, () => {});
    });
    this.#continuation = this.#resumed = followed;
    this.#startHandshake(true, (answer) => {
      if (followed.done) return;
      if (answer.kind === "none") return this.#end(followed, (stream) => stream.end());
      followed.id = answer.id;
      this.#followed.set(answer.id, followed);
    });
    return followed.stream.readable;
  }
}
