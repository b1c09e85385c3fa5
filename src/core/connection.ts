import * as CHAT_MESSAGE_TYPES from "./frame-types";
import type { AgentConnection } from "agents/chat/transport";
import { type AddressedSocket, agentNameToKebab, httpAddressOf } from "./address";
import { laneOf } from "./direct-lane";
import type { Cell } from "./chat-state";

// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

type Listener = (event: MessageEvent) => void;

/**
 * What the chat needs from a connection: `AgentClient` (from `agents/client`)
 * and the connection `useAgent` returns both fit, as does any socket that
 * speaks the `cf_agent_*` protocol.
 */
export interface AgentSocket {
  send(data: string): boolean | void;
  addEventListener(type: string, listener: (event: MessageEvent) => void, options?: { signal?: AbortSignal }): void;
  removeEventListener(type: string, listener: (event: MessageEvent) => void): void;
  /** WebSocket ready state; `1` is open. Sockets without it count as open. */
  readonly readyState?: number;
  /** Set by `AgentClient` when the connection closed for good. */
  readonly connectionError?: Error | null;
  close?(code?: number, reason?: string): void;
  reconnect?(code?: number, reason?: string): void;
}

/** Connection lifecycle as the UI sees it. */
export type ConnectionStatus = "connecting" | "open" | "closed";

/** Where a bridge publishes the connection's state: `connectionStatus` and `connectionError`. */
export interface ConnectionCells {
  connection: Cell<ConnectionStatus>;
  connectionError: Cell<Error | null>;
  /** Names the agent in errors: `agent/name`, never a URL with its query. */
  label: string;
}

/** Handlers for the events of one socket, in the order the session needs them. */
export interface SocketHandlers {
  /** A frame arrived; true when it was a chat response frame (nothing else on the socket reads those). */
  message(data: unknown): boolean | void;
  open(): void;
  close(event: CloseInfo): void;
  /** Sees every frame the transport sends, before it goes out. */
  transportSend?(data: string): void;
}

const OPEN = 1;

/** The fields of a response frame that decide how it is delivered. */
export interface DeliverableFrame {
  id: string;
  body: string;
  done: boolean;
  error: boolean;
  replay: boolean;
  replayComplete: boolean;
  continuation: boolean;
  seq: number | undefined;
}

interface DeltaRun {
  id: string;
  continuation: boolean;
  /** A replayed run: replayed and live deltas never merge (the transport ends its replay batch on the first live frame). */
  replay: boolean;
  /** Chunk type and part id: deltas merge only within one part. */
  key: string;
  type: string;
  partId: string;
  /** The merged delta, as escaped JSON string content. */
  text: string;
  seq: number | undefined;
  /** The first frame as received, delivered unchanged when nothing merged into it. */
  data: string;
  merged: number;
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
export function readDelta(body: string): Pick<DeltaRun, "key" | "type" | "partId" | "text"> | undefined {
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

/** The fields of a close event the client reads. */
export interface CloseInfo {
  code?: number;
  reason?: string;
  wasClean?: boolean;
}

/**
 * Reads a close event. PartySocket's own close (from `close()`/`reconnect()`)
 * can reach listeners with the original event tucked into `reason` and a
 * non-numeric `code`; the real fields are read from there.
 */
export function readCloseEvent(event: unknown): CloseInfo {
  const outer = (event ?? {}) as Record<string, unknown>;
  const source = typeof outer.code === "number" ? outer : ((outer.reason ?? {}) as Record<string, unknown>);
  return {
    code: typeof source.code === "number" ? source.code : undefined,
    reason: typeof source.reason === "string" ? source.reason : undefined,
    wasClean: typeof source.wasClean === "boolean" ? source.wasClean : undefined
  };
}

/** What a plain HTTP request to an agent's address answered (`status` null: no answer at all). */
export interface ProbeAnswer {
  status: number | null;
}

/** What the answer means for a socket that could not open. */
function causeOf({ status }: ProbeAnswer): string {
  if (status === null) return ": no answer from the server";
  const http = `HTTP ${status}`;
  if (status === 401 || status === 403) return `: the server refused with ${http}`;
  if (status > 501 && status < 505) return `: the server answered ${http}`;
  return `: the server answered ${http}, not a WebSocket`;
}

/** Development builds only: what to check after that answer. */
function hintFor(agent: string, { status }: ProbeAnswer): string {
  if (status === null) return "Is it running, and does it allow this origin?";
  if (status === 401 || status === 403) return "Check the credentials in `query` and onBeforeConnect.";
  if (status > 501 && status < 505) return "A proxy could not reach the worker: is it running?";
  if (status === 400 || status === 404) {
    return (
      `Check that the worker exports the class "${agent}", binds it as a Durable Object ` +
      `(URL segment "${agentNameToKebab(agent)}") and calls routeAgentRequest().`
    );
  }
  return "Check that this address reaches routeAgentRequest(), and the worker's logs.";
}

/** Where a failed connection attempt was pointed, and what a probe learned about it. */
export interface FailureContext {
  /** The agent's class name as the caller gave it (default: the label's first segment). */
  agent?: string;
  /** The agent's HTTP address without its query (tokens never reach messages). */
  url?: string | null;
  answer?: ProbeAnswer;
}

/**
 * The error a failed connection attempt is reported with, in people's words:
 * the agent, its address (never the query: it can hold tokens), what the
 * server answered when a probe learned it, a hint, and the retry count. A
 * close code of an attempt that never opened says nothing useful and is left out.
 */
export function connectionFailure(label: string, attempt: number, { agent, url, answer }: FailureContext = {}): Error {
  const cause = answer ? causeOf(answer) : "";
  const hint = answer && process.env.NODE_ENV !== "production" ? hintFor(agent ?? label.split("/")[0]!, answer) : "";
  const error = new Error(`Could not connect to agent ${label}${url ? ` at ${url}` : ""}${cause}; retrying (attempt ${attempt}).${hint && ` ${hint}`}`);
  error.name = "AgentConnectionError";
  return error;
}

/** Failed opens in a row before the address is probed. */
export const PROBE_AFTER_FAILURES = 2;
/** Probes one socket may make in its lifetime, however often it fails. */
export const MAX_PROBES = 3;

interface Diagnosis {
  /** The probe of the current run of failures, once started. */
  answer?: Promise<ProbeAnswer>;
  /** Its result, once in. */
  known?: ProbeAnswer;
  probes: number;
  warned?: boolean;
}

/** Shared by every listener of one socket: useAgent and a chat on it probe and warn once between them. */
const diagnoses = new WeakMap<object, Diagnosis>();

/**
 * Rule (a refused socket is explained): a browser WebSocket never tells why
 * its upgrade failed. After PROBE_AFTER_FAILURES failed opens in a row, one
 * plain `fetch` of the same address (query included) learns the HTTP status
 * (400 for an agent name no binding matches, 401/403 for a refused token…):
 * one probe per run of failures, at most MAX_PROBES per socket. The error
 * then names the status and a hint; the console hears of it once per socket.
 */
export class FailureProbe {
  readonly #socket: AddressedSocket;
  readonly #label: string;
  readonly #agent: string | undefined;

  constructor(socket: AgentSocket, label: string, agent?: string) {
    this.#socket = socket as AddressedSocket;
    this.#label = label;
    this.#agent = agent;
  }

  /** The error for failed attempt `attempt`, with what a probe of this run learned. */
  failure(attempt: number): Error {
    const answer = diagnoses.get(this.#socket)?.known;
    return connectionFailure(this.#label, attempt, { agent: this.#agent, url: httpAddressOf(this.#socket), answer });
  }

  /** Probes when this failure calls for it; `report` gets the explained error unless `stale()` by then. */
  afterFailure(attempt: number, stale: () => boolean, report: (error: Error) => void): void {
    const socket = this.#socket;
    if (attempt < PROBE_AFTER_FAILURES) return;
    const run = diagnoses.get(socket) ?? { probes: 0 };
    diagnoses.set(socket, run);
    if (!run.answer) {
      const url = (socket._pkurl ?? socket.getHttpUrl?.())?.replace(/^ws/, "http");
      if (!url?.startsWith("http") || run.probes >= MAX_PROBES) return;
      run.probes++;
      const answer = fetch(url, { cache: "no-store", signal: AbortSignal.timeout(10_000) }).then(
        (response) => ({ status: response.status }),
        () => ({ status: null })
      );
      const pending: Promise<ProbeAnswer> = answer.then((known) => {
        if (run.answer === pending) run.known = known;
        return known;
      });
      run.answer = pending;
    }
    const pending = run.answer;
    void pending.then(() => {
      if (stale() || run.answer !== pending) return;
      const error = this.failure(attempt);
      if (!run.warned) console.warn(`[agents-vue] ${error.message}`);
      run.warned = true;
      report(error);
    });
  }

  /** The socket opened: the next run of failures probes afresh (within MAX_PROBES). */
  opened(): void {
    const run = diagnoses.get(this.#socket);
    if (run) run.answer = run.known = undefined;
  }
}

/**
 * Sits between one socket and everything that listens to it. The session
 * gets every event first; the transport's per-stream listeners only get what
 * the session lets through:
 * - response frames the session did not swallow (a frame `onFrame` consumed
 *   never reaches a stream);
 * - the close of a socket that had opened, or the final close after which no
 *   reconnect will come. A failed connection attempt does not end a request
 *   that is still waiting in the socket's send buffer: it goes out when the
 *   socket opens.
 */
export class SocketBridge {
  readonly #messageListeners = new Set<Listener>();
  readonly #closeListeners = new Set<Listener>();
  #openedThisAttempt: boolean;
  #disposed = false;
  /** Whether the last close ended reconnection (a policy code, retries spent). */
  finalClose = false;

  readonly #socket: AgentSocket;
  readonly #handlers: SocketHandlers;
  readonly #cells: ConnectionCells;
  readonly #probe: FailureProbe;
  #failedAttempts = 0;

  constructor(socket: AgentSocket, handlers: SocketHandlers, cells: ConnectionCells) {
    this.#socket = socket;
    this.#handlers = handlers;
    this.#cells = cells;
    this.#probe = new FailureProbe(socket, cells.label);
    this.#openedThisAttempt = this.isOpen;
    cells.connectionError.value = socket.connectionError ?? null;
    cells.connection.value = this.#openedThisAttempt ? "open" : "connecting";
    const lane = laneOf(socket);
    if (lane) this.#leaveLane = lane(this.#onMessage);
    else socket.addEventListener("message", this.#onMessage);
    socket.addEventListener("open", this.#onOpen);
    socket.addEventListener("close", this.#onClose);
    socket.addEventListener("error", this.#onError);
  }

  get isOpen(): boolean {
    return this.#socket.readyState === undefined || this.#socket.readyState === OPEN;
  }

  /** The connection the transport sees. */
  readonly transportView: AgentConnection = {
    send: (data) => {
      this.#handlers.transportSend?.(data);
      return this.#socket.send(data);
    },
    addEventListener: (type, listener, options) => {
      const set = this.#listenersOf(type);
      if (!set) return;
      set.add(listener);
      options?.signal?.addEventListener("abort", () => set.delete(listener), { once: true });
    },
    removeEventListener: (type, listener) => {
      this.#listenersOf(type)?.delete(listener);
    }
  };

  /** The transport's listeners of one event type (it only listens for messages and closes). */
  #listenersOf(type: string): Set<Listener> | undefined {
    return type === "message" ? this.#messageListeners : type === "close" ? this.#closeListeners : undefined;
  }

  /**
   * Hands a response frame to the transport's streams. Consecutive text or
   * reasoning deltas of one part are merged into one frame, delivered at the
   * end of the current task burst (or before any other frame), so a fast
   * stream runs upstream's transport and the AI SDK's per-chunk pipeline once
   * per burst instead of once per token. Replayed deltas merge too (the
   * transport would merge their chunks itself, after parsing each frame),
   * except a continuation's: the transport drops the replayed chunks it
   * already applied by their `seq`, one chunk at a time.
   */
  deliver(frame: DeliverableFrame, data: string): void {
    if (this.#messageListeners.size === 0) return;
    const mergeable = !(frame.done || frame.error || frame.replayComplete || (frame.replay && frame.continuation));
    const delta = mergeable ? readDelta(frame.body) : undefined;
    const run = this.#run;
    if (delta && run && run.id === frame.id && run.continuation === frame.continuation && run.replay === frame.replay && run.key === delta.key) {
      run.text += delta.text;
      run.merged++;
      if (frame.seq !== undefined) run.seq = frame.seq;
      return;
    }
    this.#flushRun();
    if (!delta) {
      this.#forwardToStreams(data);
      return;
    }
    this.#run = { ...delta, id: frame.id, continuation: frame.continuation, replay: frame.replay, seq: frame.seq, data, merged: 1 };
    this.#runTimer = setTimeout(this.#flushRun, 0);
  }

  #run: DeltaRun | null = null;
  #runTimer: ReturnType<typeof setTimeout> | undefined;

  /** Takes the pending merged deltas (null when none), cancelling their delivery. */
  #takeRun(): DeltaRun | null {
    clearTimeout(this.#runTimer);
    this.#runTimer = undefined;
    const run = this.#run;
    this.#run = null;
    return run;
  }

  /** Delivers the pending merged deltas now. */
  readonly #flushRun = (): void => {
    const run = this.#takeRun();
    if (!run) return;
    if (run.merged === 1) {
      this.#forwardToStreams(run.data);
      return;
    }
    const body = `{"type":"${run.type}","id":"${run.partId}","delta":"${run.text}"}`;
    // JSON leaves the undefined fields out: `continuation` and `replay` appear only when true, `seq` only when known.
    const merged = {
      type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE,
      id: run.id,
      body,
      done: false,
      continuation: run.continuation || undefined,
      replay: run.replay || undefined,
      seq: run.seq
    };
    this.#forwardToStreams(JSON.stringify(merged));
  };

  /** Hands a response frame to the transport's streams as it is. */
  #forwardToStreams(data: string): void {
    if (this.#messageListeners.size === 0) return;
    // The transport reads only `.data`; a real MessageEvent per frame costs more than the rest of the hop.
    const event = { data } as MessageEvent;
    // A snapshot, as EventTarget takes: a stream started by this frame must not see it.
    for (const listener of Array.from(this.#messageListeners)) listener(event);
  }

  /** Ends every transport stream as if its socket had closed. */
  #interruptStreams(code = 1006): void {
    this.#flushRun();
    if (this.#closeListeners.size === 0) return;
    const event = new MessageEvent("close", { data: code });
    for (const listener of Array.from(this.#closeListeners)) listener(event);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#takeRun();
    this.#leaveLane?.();
    this.#socket.removeEventListener("message", this.#onMessage);
    this.#socket.removeEventListener("open", this.#onOpen);
    this.#socket.removeEventListener("close", this.#onClose);
    this.#socket.removeEventListener("error", this.#onError);
    this.#messageListeners.clear();
    this.#closeListeners.clear();
  }

  /** A frame from the socket; on a direct lane, true when the chat read it as a response frame. */
  readonly #onMessage = (event: MessageEvent): boolean => !this.#disposed && this.#handlers.message(event.data) === true;

  #leaveLane: (() => void) | undefined;

  readonly #onOpen = () => {
    if (this.#disposed) return;
    this.#openedThisAttempt = true;
    this.finalClose = false;
    this.#failedAttempts = 0;
    this.#probe.opened();
    this.#cells.connection.value = "open";
    this.#cells.connectionError.value = null;
    this.#handlers.open();
  };

  readonly #onClose = (message: MessageEvent) => {
    const event = readCloseEvent(message);
    if (this.#disposed) return;
    const opened = this.#openedThisAttempt;
    this.#openedThisAttempt = false;
    const socket = this.#socket as AgentSocket & { shouldReconnect?: boolean };
    // AgentClient sets connectionError synchronously on a final close; a
    // socket that stopped reconnecting for another reason says so too.
    this.finalClose = !!socket.connectionError || socket.shouldReconnect === false;
    const cells = this.#cells;
    cells.connection.value = this.finalClose ? "closed" : "connecting";
    // An attempt that never opened: the address is unreachable or refused.
    if (!opened) {
      const attempt = ++this.#failedAttempts;
      cells.connectionError.value = socket.connectionError ?? this.#probe.failure(attempt);
      if (!this.finalClose) {
        // Opening resets the count, and any later close counts: either makes this probe's report stale.
        const stale = () => this.#disposed || this.#failedAttempts !== attempt;
        this.#probe.afterFailure(attempt, stale, (error) => (cells.connectionError.value = error));
      }
    } else if (socket.connectionError) cells.connectionError.value = socket.connectionError;
    this.#handlers.close(event);
    if (opened || this.finalClose) this.#interruptStreams(event.code);
  };

  readonly #onError = () => {
    if (this.#disposed) return;
    if (!this.#openedThisAttempt) this.#cells.connectionError.value ??= this.#probe.failure(this.#failedAttempts + 1);
  };
}
