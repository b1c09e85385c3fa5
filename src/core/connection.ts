import { type AddressedSocket, agentNameToKebab, httpAddressOf } from "./address";
import { laneOf } from "./direct-lane";
import type { Cell } from "./chat-state";

// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

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
  /** `interrupts`: a socket that had opened closed, or no reconnect will come: no turn's end reaches this socket. */
  close(event: CloseInfo, interrupts: boolean): void;
}

const OPEN = 1;

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
 * Holds the only listeners on one socket: every event goes to the session,
 * and the connection's state (`connectionStatus`, `connectionError`) is
 * published from them.
 */
export class SocketBridge {
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

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#leaveLane?.();
    this.#socket.removeEventListener("message", this.#onMessage);
    this.#socket.removeEventListener("open", this.#onOpen);
    this.#socket.removeEventListener("close", this.#onClose);
    this.#socket.removeEventListener("error", this.#onError);
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
    this.#handlers.close(event, opened || this.finalClose);
  };

  readonly #onError = () => {
    if (this.#disposed) return;
    if (!this.#openedThisAttempt) this.#cells.connectionError.value ??= this.#probe.failure(this.#failedAttempts + 1);
  };
}
