/**
 * The server's continuation after a tool output or an approval, as one value.
 *
 * - `scheduled`: asked for; the probe goes out once the chat settles.
 * - `probing`: the AI SDK resume runs; the server may already have named the
 *   pending turn (`cf_agent_stream_pending` carries its id).
 * - `attached`: the transport took the server's offer and renders it.
 * - `observed`: the server offered it before the probe did; the observer renders it.
 * - `cancel-on-start`: stopped before it started; its turn is cancelled when
 *   the server announces it (never ACKed). Upstream leaves it running.
 *
 * `token` tells a settling resume whether the continuation it launched is still the current one.
 */
export type Continuation =
  | { kind: "idle" }
  | { kind: "scheduled"; token: number }
  | { kind: "probing"; token: number; requestId: string | null }
  | { kind: "attached"; token: number; requestId: string }
  | { kind: "observed"; token: number; requestId: string }
  | { kind: "cancel-on-start"; probeId: string; requestId: string | null };

export const idle: Continuation = { kind: "idle" };
let tokens = 0;

/** A continuation this client asked for that has not ended: `isToolContinuation`. */
export const isRunning = (c: Continuation): boolean => c.kind !== "idle" && c.kind !== "cancel-on-start";

/** Rule (continuation requested): a tool output or approval asks for the continuation once; a new one clears a stop's pending cancel. */
export function requested(c: Continuation): Continuation {
  return isRunning(c) ? c : { kind: "scheduled", token: ++tokens };
}

/** Rule (continuation launched): the scheduled continuation's probe starts (the chat settled). */
export function launched(c: Continuation): Continuation {
  return c.kind === "scheduled" ? { kind: "probing", token: c.token, requestId: null } : c;
}

/** Rule (continuation attached): the transport took a stream offer while the probe ran: that stream is the continuation. */
export function attached(c: Continuation, requestId: string): Continuation {
  return c.kind === "probing" ? { kind: "attached", token: c.token, requestId } : c;
}

/** Rule (pending turn named, #1784): the server named the pending turn; a stopped continuation learns the id it must cancel. */
export function pendingNamed(c: Continuation, requestId: string | undefined, probeId: string | undefined): Continuation {
  // Any of the stopped continuation's probes may name it: the launch's answer can still be on its way (issue 22, 3).
  if (c.kind === "cancel-on-start") return probeId !== undefined ? { ...c, requestId: requestId ?? c.requestId } : c;
  if (c.kind === "probing" && requestId) return { ...c, requestId };
  return c;
}

/** Rule (continuation observed early): the server offered the continuation before the probe asked; the observer renders it. */
export function observedEarly(c: Continuation, requestId: string): Continuation {
  return c.kind === "scheduled" || c.kind === "probing" ? { kind: "observed", token: ++tokens, requestId } : c;
}

/** Rule (continuation settled): the resume that `token` launched settled; a newer continuation is not its to end. */
export function settled(c: Continuation, token: number): Continuation {
  return "token" in c && c.token === token ? idle : c;
}

/** The request id a stop must cancel, or a running continuation's id. */
export function requestIdOf(c: Continuation): string | null {
  return "requestId" in c ? c.requestId : null;
}

/**
 * Rule (stop before start): a continuation that the transport has not attached
 * to and the observer does not render has no stream to abort; the client asks
 * which turn is pending (`probeId`) and cancels that turn when it starts.
 */
export function stoppedBeforeStart(c: Continuation, probeId: string): Continuation {
  return { kind: "cancel-on-start", probeId, requestId: requestIdOf(c) };
}

/**
 * Whether an offer (`id`, answering `probeId`) is the turn a stopped
 * continuation waits to cancel: its own id once known; before that, whatever
 * answers one of its probes (the launch's answer may still be on its way,
 * issue 22, 3), unless this client already follows that turn.
 */
export function isStoppedTurn(c: Continuation, id: string, probeId: string | undefined, followed: boolean): boolean {
  if (c.kind !== "cancel-on-start") return false;
  return c.requestId !== null ? id === c.requestId : probeId !== undefined && !followed;
}
