import type { UIMessageChunk } from "ai";
import { type ResponseFrame, chunkOf } from "./frames";

/** The error a stream ends with when its socket closed before the turn's `done` (#2013). */
export const CLOSED_MID_STREAM = "WebSocket closed mid-stream";

/** A plain text or reasoning delta read from a chunk body without parsing it. */
export interface PlainDelta {
  /** Chunk type and part id: deltas merge only within one part. */
  key: string;
  type: "text-delta" | "reasoning-delta";
  partId: string;
  /** The delta as escaped JSON string content. */
  text: string;
}

const TEXT_DELTA = '{"type":"text-delta","id":"';
const REASONING_DELTA = '{"type":"reasoning-delta","id":"';
const DELTA_FIELD = '","delta":"';

/**
 * A plain text or reasoning delta (no provider metadata), or undefined. The
 * server writes these chunks as `{"type":…,"id":…,"delta":…}`; the delta is
 * kept as escaped JSON string content, so merging never parses or re-escapes
 * it (two escaped runs concatenate into a valid escaped run).
 * Read by prefix and quotes, not by a regular expression: it runs on every
 * frame of a stream.
 */
export function readDelta(body: string): PlainDelta | undefined {
  const type = body.startsWith(TEXT_DELTA) ? "text-delta" : body.startsWith(REASONING_DELTA) ? "reasoning-delta" : undefined;
  if (!type || !body.endsWith('"}')) return undefined;
  const idStart = type.length + 17;
  const idEnd = body.indexOf('"', idStart);
  const partId = body.slice(idStart, idEnd);
  if (idEnd < 0 || partId.includes("\\") || !body.startsWith(DELTA_FIELD, idEnd)) return undefined;
  const start = idEnd + DELTA_FIELD.length;
  const end = body.length - 2;
  if (end < start) return undefined;
  // The delta is one JSON string up to the closing `"}`: every quote before its end is escaped, the last one is not.
  for (let quote = body.indexOf('"', start); quote !== -1 && quote <= end; quote = body.indexOf('"', quote + 1)) {
    let slashes = 0;
    while (body.charCodeAt(quote - 1 - slashes) === 92) slashes++;
    if ((slashes % 2 === 0) !== (quote === end)) return undefined;
  }
  return { key: `${type}:${partId}`, type, partId, text: body.slice(start, end) };
}

/** Escaped JSON string content as text; only content with an escape in it is parsed. */
const unescape = (text: string): string => (text.includes("\\") ? (JSON.parse(`"${text}"`) as string) : text);

/**
 * The chunks of one turn on their way to the AI SDK: the readable side of a
 * stream the transport returns, written by the session with frames it has
 * already decoded.
 *
 * Rule (a burst is one chunk per part): consecutive text or reasoning deltas
 * of one part are merged while a task's burst of frames lasts, and replayed
 * chunks wait for the replay to pause or end, so a fast stream or a long
 * replay runs the AI SDK's per-chunk pipeline once per burst instead of once
 * per token. Anything else goes out at once, after what waited.
 */
export class TurnStream {
  readonly readable: ReadableStream<UIMessageChunk>;
  #controller!: ReadableStreamDefaultController<UIMessageChunk>;
  /** Chunks that wait for the end of the burst; a trailing delta stays escaped (`#delta`) until then. */
  #waiting: UIMessageChunk[] = [];
  #delta: PlainDelta | null = null;
  /** The message a waiting replayed `start` named. */
  #waitingStart: string | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #open = true;

  /** `cancelled`: the AI SDK let go of the stream (a stop, an abort). */
  constructor(cancelled: () => void) {
    this.readable = new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#open = false;
        this.#drop();
        cancelled();
      }
    });
  }

  get open(): boolean {
    return this.#open;
  }

  /** A chunk-carrying frame of the turn (not its end). */
  push(frame: ResponseFrame): void {
    if (!this.#open) return;
    const delta = frame.replayComplete ? undefined : readDelta(frame.body);
    if (delta) {
      const tail = this.#delta;
      if (tail?.key === delta.key) tail.text += delta.text;
      else {
        this.#settleDelta();
        this.#delta = delta;
      }
      return this.#wait();
    }
    const chunk = chunkOf(frame) as UIMessageChunk | undefined;
    if (chunk !== undefined && frame.replay && !frame.replayComplete) {
      if (chunk.type === "start" && !frame.continuation && chunk.messageId !== undefined) {
        // Rule (a second replay pass replaces the first, #30): the server replayed its buffer again before the first pass went out.
        if (chunk.messageId === this.#waitingStart) this.#drop();
        this.#waitingStart = chunk.messageId;
      }
      this.#settleDelta();
      this.#waiting.push(chunk);
      return this.#wait();
    }
    this.flush();
    if (chunk !== undefined) this.#write(() => this.#controller.enqueue(chunk));
  }

  /** A part's start chunk again, before the chunks that follow it (`replay`: it waits with the replay). */
  reopen(chunk: UIMessageChunk, replay: boolean): void {
    if (!replay) return this.enqueue(chunk);
    this.#settleDelta();
    this.#waiting.push(chunk);
    this.#wait();
  }

  /** Sends a chunk the session made (a part a recovery dropped the start of), after what waited. */
  enqueue(chunk: UIMessageChunk): void {
    this.flush();
    this.#write(() => this.#controller.enqueue(chunk));
  }

  /** Delivers what waits now. */
  readonly flush = (): void => {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#settleDelta();
    const waiting = this.#waiting;
    this.#waitingStart = undefined;
    if (waiting.length === 0) return;
    this.#waiting = [];
    this.#write(() => {
      for (const chunk of waiting) this.#controller.enqueue(chunk);
    });
  };

  /** The turn ended: what waited goes, then the stream closes. */
  end(): void {
    this.flush();
    this.#close(() => this.#controller.close());
  }

  /**
   * The turn failed with `message`. A stream that delivers nothing more ends with the error itself; one with
   * chunks still waiting delivers them first and reports the error as a chunk (`controller.error` would drop them).
   */
  fail(message: string): void {
    if (this.#waiting.length === 0 && this.#delta === null) return this.#close(() => this.#controller.error(new Error(message)));
    this.flush();
    this.#close(() => {
      this.#controller.enqueue({ type: "error", errorText: message });
      this.#controller.close();
    });
  }

  /** Rule (a close interrupts the turn, #2013): the socket closed before the turn's end; the AI SDK reports an interrupted turn. */
  interrupt(): void {
    this.flush();
    this.#close(() => {
      this.#controller.enqueue({ type: "error", errorText: CLOSED_MID_STREAM });
      this.#controller.close();
    });
  }

  /** Ends the stream as aborted; nothing that waited is delivered. */
  abort(): void {
    this.#drop();
    const error = new Error("Aborted");
    error.name = "AbortError";
    this.#close(() => this.#controller.error(error));
  }

  #wait(): void {
    this.#timer ??= setTimeout(this.flush, 0);
  }

  #settleDelta(): void {
    const delta = this.#delta;
    if (!delta) return;
    this.#delta = null;
    this.#waiting.push({ type: delta.type, id: delta.partId, delta: unescape(delta.text) } as UIMessageChunk);
  }

  #drop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#waiting = [];
    this.#delta = null;
    this.#waitingStart = undefined;
  }

  #close(close: () => void): void {
    if (!this.#open) return;
    this.#open = false;
    this.#write(close);
  }

  #write(write: () => void): void {
    try {
      write();
    } catch {
      // The AI SDK already let go of the stream.
    }
  }
}
