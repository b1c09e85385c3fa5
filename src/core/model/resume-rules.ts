import type { UIMessage } from "ai";
import * as CHAT_MESSAGE_TYPES from "../frame-types";
import { attached, idle, isRunning, isStoppedTurn, observedEarly, pendingNamed } from "./continuation";
import type { ChatModel, HandshakeAnswer } from "./index";
import { endObservedBy, endObservedUnseen, letGoIgnoredAck } from "./response-rules";

/** Rule (idle proves nothing runs): whether `probeId` answers the idle probe, which then waits no more. */
function answersIdleProbe<M extends UIMessage>(m: ChatModel<M>, probeId: string | undefined): boolean {
  if (probeId === undefined || probeId !== m.probes.idleId) return false;
  m.probes.idleId = null;
  return true;
}

/**
 * Rule (one handshake at a time): the AI SDK resume (a reconnect's probe, `resumeStream()`, a tool
 * continuation) waits for the server's answer to probe `probeId`; the shell holds the AI SDK's side of it.
 */
export function handshakeStarted<M extends UIMessage>(m: ChatModel<M>, probeId: string, continuation: boolean): void {
  m.handshake = { probeId, continuation };
  m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId });
}

/** The waiting handshake is answered with `answer` (it waits no more unless the server said "pending"). */
function answerHandshake<M extends UIMessage>(m: ChatModel<M>, answer: HandshakeAnswer): void {
  if (answer.kind === "offer" || answer.kind === "none") m.handshake = null;
  m.emit({ kind: "handshake", answer });
}

/** No answer came in time: the handshake of `probeId` resolves as nothing to resume. */
export function handshakeTimedOut<M extends UIMessage>(m: ChatModel<M>, probeId: string): void {
  if (m.handshake?.probeId === probeId) answerHandshake(m, { kind: "none" });
}

/** Settles the waiting handshake as if nothing ran, without it meaning the server is idle (a send may not wait for it). */
export function cancelHandshake<M extends UIMessage>(m: ChatModel<M>): void {
  if (!m.handshake) return;
  // Rule (a let-go probe's answer still counts): the server answers it all the same (see `onResumeNone`).
  m.probes.letGo = m.handshake.probeId;
  answerHandshake(m, { kind: "none" });
}

/** Rule (a dropped handshake waits no more): the AI SDK let go of the waiting handshake (its continuation stopped or cut before the offer). */
export function handshakeDropped<M extends UIMessage>(m: ChatModel<M>): void {
  m.handshake = null;
}

/** Rule (an obsolete resume lets go): every resume of this chat lets go locally; the server turns run on. */
export function letGoResumes<M extends UIMessage>(m: ChatModel<M>): void {
  m.handshake = null;
  m.emit({ kind: "let-go-resumes" });
}

/** `cf_agent_stream_pending` (#1784): the server took a turn that has not started streaming. */
export function onPending<M extends UIMessage>(m: ChatModel<M>, id: string | undefined, probeId: string | undefined): void {
  if (m.handshake) answerHandshake(m, { kind: "pending" });
  // Rule (idle proves nothing runs): a pending answer is the idle probe's answer; the offer that follows carries no probe id.
  answersIdleProbe(m, probeId);
  // Rule (held and recovering turns): the server says "pending" only while no stream runs, so a held or observed turn other than the pending one is over.
  if (id !== undefined) {
    if (m.turns.heldTurn !== id) m.turns.heldTurn = null;
    endObservedBy(m, id);
  }
  m.continuation = pendingNamed(m.continuation, id, probeId);
}

/**
 * `cf_agent_stream_resume_none`. Rule (idle proves nothing runs, #1914): only
 * an `idle` answer to a probe of this client's, matched by `probeId`, ends
 * what was held or observed.
 */
export function onResumeNone<M extends UIMessage>(m: ChatModel<M>, reason: string | undefined, probeId: string | undefined): void {
  const c = m.continuation;
  if (c.kind === "cancel-on-start" && c.probeId === probeId) m.continuation = idle;
  // The waiting handshake takes an answer to its own probe, or one that names none.
  const handled = m.handshake !== null && (probeId === undefined || probeId === m.handshake.probeId);
  if (handled) answerHandshake(m, { kind: "none" });
  // Rule (a declined offer is ACKed once the probe finds nothing): the server parked this socket when it
  // offered; its stream ended without unparking it, which would withhold this client's own next stream.
  const declined = m.probes.declined;
  if (declined !== null && probeId !== undefined) {
    m.probes.declined = null;
    m.turns.at(declined).replay = { kind: "self" };
    m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id: declined });
  }
  const answersIdle = answersIdleProbe(m, probeId);
  // Rule (a let-go probe's answer still counts): a probe this client let go (a stop ended it, seed 2054450596) is still
  // answered; an idle answer to it proves nothing runs, so the turn it watched across a reconnect is over.
  const answersLetGo = probeId !== undefined && probeId === m.probes.letGo;
  if (answersLetGo) m.probes.letGo = null;
  if ((handled || answersIdle || answersLetGo) && reason === "idle" && typeof probeId === "string") {
    // An observed turn the server says is over ended unseen here, as when another request supersedes it.
    endObservedUnseen(m);
    m.turns.heldTurn = null;
    if (!m.probes.recovering) m.turns.recoveringTurn = null;
    if (m.continuation.kind === "observed") m.continuation = idle;
  }
  m.reconcile();
}

/**
 * `cf_agent_stream_resuming`. Rule (one ACK per offer per socket, #1733): the server offers a running stream. The
 * transport's waiting probe takes it (ACK and attach); otherwise this client
 * ACKs it itself and renders it as an observed turn, once per socket.
 */
export function onStreamResuming<M extends UIMessage>(m: ChatModel<M>, id: string, probeId: string | undefined): void {
  const turns = m.turns;
  // Server turns are serialized: an offer for another request ends the held one, and the observed one.
  if (turns.heldTurn !== id) turns.heldTurn = null;
  endObservedBy(m, id);
  letGoIgnoredAck(m, id);
  const idleAnswer = answersIdleProbe(m, probeId);
  if (cancelStoppedContinuation(m, id, probeId)) return;
  // Rule (own request offered): the server withholds a stream from a socket it offered it to until an
  // ACK; a request this client sent and still streams (a socket parked by a probe while it was pending)
  // is ACKed, never given to a probe: its transport stream takes the replay, which starts from chunk 0.
  // Not one it stopped, nor one ACKed already (by this rule, or by the transport: its ACK starts `seq`).
  // So does the idle probe's answer (seed 68999617): no AI SDK resume waits for it.
  const own = turns.isLocal(id) && (probeId === undefined || idleAnswer) ? turns.at(id) : undefined;
  if (own) {
    if (own.replay.kind !== "self" && own.follow.kind === "chat" && own.delivered === null) {
      turns.selfAcked(id);
      m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id });
    }
    return;
  }
  const awaiting = m.handshake !== null;
  const earlyContinuation = isRunning(m.continuation) && !awaiting;
  if (!m.io.settings().resume && !awaiting && !earlyContinuation) {
    // Rule (withheld offer): not resuming, a live stream is withheld from this socket until it ends.
    if (probeId === undefined) turns.heldTurn = id;
    if (turns.recoveringTurn !== id) turns.recoveringTurn = null;
    m.reconcile();
    return;
  }
  // A probe goes out on this socket as soon as the chat settles; its answer
  // offers the same stream again, so ACKing this one too would replay twice.
  if (probeId === undefined && !awaiting && !earlyContinuation && m.probes.reconnect) {
    m.probes.declined = id;
    return;
  }
  const turn = turns.at(id);
  if (!isRunning(m.continuation)) turn.rebuilds = true;
  if (m.probes.declined === id) m.probes.declined = null;
  const handshake = m.handshake;
  if (handshake) {
    // Rule (the handshake takes the offer): the AI SDK resume renders it; the ACK starts its replay from chunk 0.
    turns.followed(id, handshake.continuation ? "continuation" : "resume");
    turns.resumeAcked(id);
    answerHandshake(m, { kind: "offer", id });
    m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id });
    m.continuation = attached(m.continuation, id);
    m.reconcile();
    return;
  }
  // The server offers from both onConnect and the probe answer (#1733); a turn this client stopped is not followed again.
  if (turns.isLocal(id) || turn.replay.kind === "self" || turn.follow.kind === "stopped") return;
  if (earlyContinuation) m.continuation = observedEarly(m.continuation, id);
  // An early continuation extends the message the tool call is in, even
  // before its replayed `start` (an empty replay would append a blank reply).
  // Rule (no empty replies): a shell the stream left before this offer goes if the replay does not fill it.
  const shell = m.observed.message?.id;
  if (shell !== undefined) turns.endedReplies.add(shell);
  m.observed.begin(id, earlyContinuation);
  turns.active = id;
  m.flags({ serverStreaming: true, recovering: false });
  if (turns.recoveringTurn !== id) turns.recoveringTurn = null;
  turns.selfAcked(id);
  m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK, id });
  m.reconcile();
}

/** Rule (stop before start): the turn a stopped continuation waited for started; it is cancelled, never ACKed. */
function cancelStoppedContinuation<M extends UIMessage>(m: ChatModel<M>, id: string, probeId: string | undefined): boolean {
  const followed = m.observed.streamId === id || m.turns.isLocal(id);
  if (!isStoppedTurn(m.continuation, id, probeId, followed)) return false;
  m.continuation = idle;
  // Followed no further: no ACK, no observed chunks; its end reads back (R3).
  m.turns.stopping([id]);
  m.send({ type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL, id });
  m.reconcile();
  return true;
}

/**
 * Rule (open edges): a socket opened: the chat's first open, a reconnect after a close (a
 * server that pushes its transcript on connect sends it on this socket, so
 * only others are read), or neither (an open the chat saw already).
 */
export function socketOpened<M extends UIMessage>(m: ChatModel<M>, now: number): "first" | "reconnect" | "reconnect-and-read" | undefined {
  const link = m.link;
  if (!link.open) link.openedAt = now;
  link.open = true;
  if (!link.everOpened) {
    link.everOpened = true;
    return "first";
  }
  if (!link.sawClose) return undefined;
  link.sawClose = false;
  m.probes.reconnect = true;
  return m.base.pushes ? "reconnect" : "reconnect-and-read";
}

/** `cf_agent_chat_recovering`. Rule (recovering, #1620): the server recovers an interrupted turn, or is done with it. */
export function onRecovering<M extends UIMessage>(m: ChatModel<M>, recovering: boolean): void {
  m.probes.recovering = recovering;
  m.flags({ recovering });
  if (!recovering) m.turns.recoveringTurn = null;
  m.reconcile();
}

/**
 * Rule (a close holds the cut turn): a socket that had opened closed. The transport ends every local stream and
 * no done frame will reach them; the turn the transport followed may still
 * run, so client tools wait for it (#2195). Without `resume`, the next open
 * asks once whether it still does.
 */
export function socketClosed<M extends UIMessage>(m: ChatModel<M>): void {
  m.link.sawClose = true;
  // Rule (a buffered send went out with its socket): what the transport buffered while the socket was down went out
  // as it opened; the next connect-time transcript is of a later connection, which the server opened after taking it.
  m.intents.buffered.clear();
  m.probes.declined = m.probes.letGo = null;
  m.probes.recovering = false;
  m.turns.socketClosed();
  m.placement.unprotect();
  const unfinished = m.turns.active;
  if (unfinished !== null) m.turns.heldTurn = unfinished;
  if (m.io.settings().resume) return;
  // Rule (idle proves nothing runs): the server answers a probe on the socket that sent it; one the close cut off is asked again.
  const cutOff = m.probes.idleId !== null;
  m.probes.idleId = null;
  m.probes.idleNeeded ||= cutOff || unfinished !== null || m.observed.active || m.turns.holdsTools;
  m.dropObserved();
}

/**
 * Rule (one probe per reconnect, #1837): the reconnect probe goes out once
 * the chat settled and no resume owns it; a handshake that crossed the
 * disconnect is re-sent instead. Returns `"resume"` when the AI SDK resume
 * must start now.
 */
export function reconnectProbe<M extends UIMessage>(m: ChatModel<M>, newProbeId: () => string): "resume" | undefined {
  const probes = m.probes;
  if (!m.link.open || !probes.reconnect) return undefined;
  if (!m.io.settings().resume) {
    // Rule (one probe per reconnect): it waits for this client's own request too; finding it pending, the server would park the socket and withhold that request's stream from it.
    if (m.busy) return undefined;
    probes.reconnect = false;
    if (probes.idleNeeded) {
      probes.idleNeeded = false;
      probes.idleId = newProbeId();
      m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId: probes.idleId });
    }
    return undefined;
  }
  // The handshake that crossed the disconnect goes out again on this socket: the same AI SDK resume.
  const handshake = m.handshake;
  if (handshake) {
    probes.reconnect = false;
    m.send({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST, probeId: handshake.probeId });
    m.emit({ kind: "handshake", answer: { kind: "retry" } });
    return undefined;
  }
  const c = m.continuation;
  if (m.busy || (isRunning(c) && c.kind !== "observed") || m.io.resuming()) return undefined;
  probes.reconnect = false;
  return "resume";
}
