import type { UIMessage } from "ai";
import * as CHAT_MESSAGE_TYPES from "../frame-types";
import { type ResponseFrame, chunkOf, isRecord } from "../frames";
import { readDelta } from "../turn-stream";
import { collapseReplayedText } from "../transcript";
import { type Continuation, idle, isRunning } from "./continuation";
import type { ChatModel } from "./index";
import { type ReadBack, type Turn, runsLive } from "./turns";
import { letGoResumes } from "./resume-rules";
import { showBase } from "./transcript-rules";

const terminal = (frame: ResponseFrame) => frame.done || frame.error;
const isObservedContinuation = (c: Continuation, id: string) => c.kind === "observed" && c.requestId === id;

/** The chunk of a local frame when it is a `start` (a frame that cannot be one is not parsed here). */
function peekStart(frame: ResponseFrame): { messageId?: unknown } | undefined {
  if (!frame.body.includes('"type":"start"')) return undefined;
  const chunk = chunkOf(frame);
  return isRecord(chunk) && chunk.type === "start" ? chunk : undefined;
}

/**
 * Rule (stop before start): a stopped continuation's turn can start with no offer to this client (its probe's
 * answer offered the turn before it; seed 2105573837, ordered). Its live frames decide: the turn the server
 * named as pending is cancelled as at its offer; with none named it is left to run and is rendered, as upstream
 * leaves it (another tab's continuation looks the same, and is not this client's to cancel).
 */
function stoppedContinuationRuns<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame): void {
  const c = m.continuation;
  if (c.kind !== "cancel-on-start" || !frame.continuation || (c.requestId !== null && c.requestId !== frame.id)) return;
  m.continuation = idle;
  if (c.requestId === null) return;
  m.turns.stopping([frame.id]);
  m.send({ type: CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL, id: frame.id });
}

/**
 * A `cf_agent_use_chat_response` frame. This client's own requests are
 * rendered by the transport (the rules keep the books); any other request is
 * rendered by the observed-turn overlay. Returns what the stream's end reads back.
 */
export function onResponse<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame): ReadBack {
  const { id } = frame;
  const turns = m.turns;
  turns.noteResponse(frame);
  const local = turns.isLocal(id);
  const unseen = frame.continuation && frame.done && frame.outcome === "aborted" && !local && !turns.get(id);
  if (unseen) m.intents.unseenContinuationAborted();
  // Rule (held and recovering turns): turns run one at a time, so another request's frame ends the observed turn (its done may have gone with a closed socket, or never come).
  if (runsLive(frame)) {
    endObservedBy(m, id);
    letGoIgnoredAck(m, id);
    if (!local) stoppedContinuationRuns(m, frame);
  }
  const ended = turns.turnEnd(frame);
  if (ended) {
    // Rule (own turn ends once settled): the AI SDK still settles our own turn; report it once it has.
    if (local && m.busy) turns.deferredEnds.push(ended);
    else m.emit({ kind: "call", name: "onTurnEnd", run: () => m.io.settings().onTurnEnd?.(ended) });
  }
  const replayed = frame.replay && frame.body.trim() !== "";
  // Rule (unsequenced replay, #1951): servers before 0.12.2 replay a
  // continuation without `seq`; its repeated text is collapsed instead.
  if (replayed && frame.continuation && frame.seq === undefined) {
    const last = m.messages.at(-1);
    if (last?.role === "assistant") turns.unsequenced.add(last.id);
  }
  if (replayed) turns.replayed(id);
  // Both the reply a local stream named and the message the overlay built for it (an offer of a request this client sent is observed).
  const replies = [turns.get(id)?.reply?.id, m.observed.streamId === id ? m.observed.message?.id : undefined];
  const shown = turns.get(id)?.shown;
  if (terminal(frame)) {
    // Rule (a declined offer is ACKed once the probe finds nothing): not one whose stream ended; its end unparked the socket.
    if (m.probes.declined === id) m.probes.declined = null;
    for (const reply of replies) if (reply !== undefined) turns.endedReplies.add(reply);
  }
  if (local) onLocalResponse(m, frame);
  else onObservedResponse(m, frame);
  if (!terminal(frame)) return "none";
  // Rule (live reply overlay): the reply goes back when its request ends, also one the transport let go of before its done (a stopped resume).
  const named = turns.get(id)?.reply?.id;
  if (named !== undefined) m.placement.release(named);
  m.reconcile();
  // Rule (a cut reply stays only if stored): the read this end makes (an ordered server's base at once) says whether it was.
  if (turns.cutByClear(frame)) for (const reply of [...replies, shown]) if (reply != null) turns.cutReplies.set(reply, m.base.newestRead);
  // Rule (an unseen continuation's end): the reply it extends was stored again where no frame of this client's showed it.
  const readBack = unseen ? "always" : turns.readBackAtEnd(frame, m.base.clock);
  // Exact sync: the ordered server sends every version to every socket, so nothing is read back.
  return m.base.exact ? "none" : readBack;
}

/**
 * Another request's turn runs: the observed one is over, unseen to its end,
 * so what it stored is read back (with `resyncOnReconnect`; an ordered server
 * sends it).
 */
export function endObservedBy<M extends UIMessage>(m: ChatModel<M>, id: string): void {
  const watched = m.observed.streamId;
  if (watched !== null && watched !== id) endObservedUnseen(m);
}

/** The observed turn is over and its end never came here: what it stored is read back (an ordered server sends it). */
export function endObservedUnseen<M extends UIMessage>(m: ChatModel<M>): void {
  const watched = m.observed.streamId !== null;
  m.dropObserved(false);
  if (watched && !m.base.exact) m.read(false);
}

/**
 * Rule (an ACK the server ignored): after a restart `AIChatAgent` offers the interrupted request on
 * connect, then starts its recovery under a new id; an ACK that reaches it after that is ignored. A
 * resume the transport attached to the first offer would wait for frames that never come, and hold
 * `status` and every queued send (chaos: server down, queued send). Offered another request, or
 * sent its live frames, the transport lets that resume go (its stream ends as it stands); the other
 * request is then followed as any other.
 */
export function letGoIgnoredAck<M extends UIMessage>(m: ChatModel<M>, id: string): void {
  const attached = m.turns.active;
  if (attached === null || attached === id || m.handshake !== null) return;
  if (!m.turns.isLocal(attached) || !m.turns.letGoUnanswered(attached)) return;
  letGoResumes(m);
}

/**
 * A request of this client's went out.
 * Rule (a superseded request's failure is not the chat's): a regenerate or an edit replaces the requests still open.
 * Rule (a raced request reads back): a rewrite reads back as it settles (*rewrite retires*) instead, and a server
 * that owns its history (Think) writes no client's list.
 */
export function requestWentOut<M extends UIMessage>(m: ChatModel<M>, id: string, sentId: string | undefined): void {
  const turns = m.turns;
  const overlapping = turns.local.some((other) => other !== id);
  const rewrite = m.intents.rewrite;
  if (rewrite) {
    turns.supersede(id);
    // A rewrite that went out while another request of this client's was open: its list carried that request's reply only
    // as far as it had come (model seed 334558694), so the stored transcript decides as it settles (rule: rewrite retires).
    if (overlapping && rewrite.clockAt !== null) rewrite.heldBack = true;
  } else if (!m.base.serverOwned) turns.wentOut(id, m.base.clock, overlapping);
  m.base.listWritten();
  m.intents.sendWentOut(id, sentId);
}

/** Rule (own request's frames): a `start` names and protects the reply; the end releases the id, the overlay and the request. */
function onLocalResponse<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame): void {
  const { id } = frame;
  const turn = m.turns.at(id);
  if (frame.continuation && !terminal(frame)) m.placement.pinLast();
  const start = peekStart(frame);
  if (typeof start?.messageId === "string") {
    // Rule (unnamed reply is protected): a reply the AI SDK appended before any start named one still reads back at the end.
    turn.reply = { id: start.messageId, unnamed: turn.reply?.unnamed === true };
    if (!frame.continuation) m.placement.protect(start.messageId, m.io.loading());
    resetForReplay(m, frame, start.messageId);
  }
  if (frame.replayComplete) turn.rebuilds = false;
  if (!terminal(frame)) return;
  // Rule (rewrite retires): a reply a rewrite of this client's removed, whose request ended only after the rewrite went out,
  // may be stored after the server took the rewrite's list (another tab stopped it meanwhile): the stored transcript decides.
  m.intents.settleRewrite(m.messages);
  const rewrite = m.intents.rewrite;
  const replyId = turn.reply?.id;
  if (rewrite && replyId !== undefined && rewrite.retracted.has(replyId)) rewrite.heldBack = true;
  if (m.observed.streamId === id) m.dropObserved(false);
  if (frame.outcome === "skipped") {
    const refused = m.intents.refused(id);
    if (refused.size > 0) m.remove((message) => refused.has(message.id));
  }
  m.placement.release(replyId);
  showBase(m, replyId);
  m.turns.ownEnded(id);
  m.base.listWritten();
  m.intents.sendsEnded((request) => isRunningRequest(m, request), false);
  if (isObservedContinuation(m.continuation, id)) m.continuation = idle;
}

/**
 * Rule (replay rebuilds, #1733): a replay restarts from chunk 0, so the reply it rebuilds is emptied to its shell first
 * (a replayed `start` names it; not a continuation's, whose reply extends the message before it).
 */
function resetForReplay<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame, messageId: string): void {
  if (!frame.replay || frame.continuation || isRunning(m.continuation)) return;
  m.turns.at(frame.id).rebuilds = false;
  const messages = m.messages;
  const last = messages.at(-1);
  if (!last || last.role !== "assistant" || last.id !== messageId) return;
  m.turns.rebuilt.add(messageId);
  m.list.replaceMessage(messages.length - 1, { ...last, parts: [] });
}

/** Rule (a request nobody here watches ended, e.g. a send the server skipped): only the books close. */
function closeUnwatched<M extends UIMessage>(m: ChatModel<M>, id: string): void {
  m.turns.at(id).applied = null;
  if (m.turns.active === id) m.turns.active = null;
  m.turns.unwatchedEnded(id);
}

/** Rule (the observer path): another request's frames; replays only once offered or observed, an error ends it unrendered, applied replays are skipped (#1951). */
function onObservedResponse<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame): void {
  const { id } = frame;
  const turn = m.turns.at(id);
  const observing = m.observed.streamId === id;
  const ownContinuation = isObservedContinuation(m.continuation, id);
  if (frame.replay && !m.observed.active && !turn.rebuilds) return noteSkippedStart(turn, frame);
  // Rule (a stopped turn is followed no further, issue 22, 3): only its end is handled, and reads back.
  if (!observing && !terminal(frame) && turn.follow.kind === "stopped") return;
  if (frame.done && !frame.error && !observing && !turn.rebuilds && !ownContinuation) {
    closeUnwatched(m, id);
    return;
  }
  if (frame.error) {
    turn.rebuilds = false;
    closeUnwatched(m, id);
    m.flags({ recovering: false });
    if (!m.observed.active || observing) m.dropObserved(false);
    if (ownContinuation) m.continuation = idle;
    return;
  }
  const appliedReplay = m.turns.isAppliedReplay(frame);
  let chunk: unknown;
  if (frame.body.trim()) {
    chunk = chunkOf(frame);
    if (chunk === undefined) {
      m.emit({ kind: "warn", key: "bad-chunk", message: `Ignored a stream chunk that is not JSON (request ${id}).` });
    } else if (isRecord(chunk)) {
      if (chunk.type === "start" && typeof chunk.messageId === "string") resetForReplay(m, frame, chunk.messageId);
      if (typeof chunk.type === "string" && chunk.type.startsWith("data-") && !appliedReplay) {
        const data = chunk;
        m.emit({ kind: "call", name: "onData", run: () => m.io.settings().onData?.(data as never) });
      }
      if (!ownContinuation) m.tools.noteOthers(chunk);
    }
  }
  if (frame.done || frame.replayComplete) turn.rebuilds = false;
  if (frame.done) {
    closeUnwatched(m, id);
    if (frame.outcome !== "recovering") m.flags({ recovering: false });
  }
  // A replayed `start` still re-seeds the message, which holds the applied chunks.
  const alreadyApplied = appliedReplay && !(isRecord(chunk) && chunk.type === "start");
  if (!frame.done && !alreadyApplied) m.turns.recordApplied(id, frame.seq);
  observeChunk(m, frame, alreadyApplied ? undefined : chunk);
  if (frame.done && ownContinuation) m.continuation = idle;
}

/**
 * Rule (a stream keeps its name): a replayed `start` this client skips (the
 * replay was not offered to it, or a clear reset the stream's record) still
 * names the reply the stream's live chunks build, so that reply is the
 * server's message, not a second one under an id of this client's.
 */
function noteSkippedStart(turn: Turn, frame: ResponseFrame): void {
  if (!frame.body.startsWith('{"type":"start"')) return;
  const chunk = chunkOf(frame);
  if (isRecord(chunk) && typeof chunk.messageId === "string") turn.named = chunk.messageId;
}

/**
 * Rule (one message per observed stream): a new stream id starts one; live chunks merge as they come, replays at `replayComplete` or `done`.
 * Upstream's `broadcastTransition` is this machine over its own `StreamAccumulator`, so it cannot carry `ObservedMessage`'s rules.
 */
function observeChunk<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame, chunk: unknown): void {
  const observed = m.observed;
  const isStart = isRecord(chunk) && chunk.type === "start";
  // A replay restarts from chunk 0: a fresh message makes it idempotent.
  let message = observed.message;
  // Rule (a continuation is observed as one): the offer began the message before any chunk said what the stream is; a
  // continuation's first chunk begins it again as a continuation, which extends the message before it (chaos: server restart).
  const misbegun = frame.continuation && message !== null && !message.continuation && !message.hasParts;
  if (observed.streamId !== frame.id || !message || (frame.replay && isStart) || misbegun) {
    message = observed.begin(frame.id, frame.continuation);
    // Rule (a stream keeps its name): live chunks after a skipped replay build the message its `start` named.
    const named = m.turns.get(frame.id)?.named;
    if (named != null) message.apply({ type: "start", messageId: named });
    // Rule (a watched turn is followed, issue 21, 1): stop() cancels the turn this tab watches, however it arrived.
    if (!frame.done && m.turns.active === null) m.turns.active = frame.id;
  }
  if (chunk !== undefined) message.apply(chunk);
  if (frame.done) {
    observed.end();
    // Rule (no empty replies): a stream that ends before a part was seen here leaves nothing to show (a done after an ACK that replayed nothing).
    if (message.hasParts || message.continuation) observed.mergeUnlessDiverged(message);
    if (message.hasParts) m.base.known.add(message.id);
    m.flags({ serverStreaming: false });
    m.dropUnstored(new Set([message.id]));
    return;
  }
  m.flags({ serverStreaming: true });
  if (chunk !== undefined && !frame.replay) observed.mergeUnlessDiverged(message);
  // Rule (no empty replies): a replay that carried nothing puts no blank reply on screen.
  else if (frame.replayComplete && (message.hasParts || message.continuation)) m.replace(observed.mergedInto(message, m.messages));
  // Also a reply shown from its live `start` on: a clear it interrupts leaves it (the server stores it after the clear once a part came).
  if (message.hasParts || (!frame.replay && isStart)) m.turns.at(frame.id).shown = message.id;
}

/**
 * Rule (unnamed reply is protected, issue 22, 1): the reply the AI SDK
 * appends for a local request whose stream named no message id (a plain-text
 * `Response` streams no `start`) is protected like any live reply, anchored
 * after the message before it. The server stores it under an id of its own,
 * so its turn's end reads back (see `readBackAtEnd`). So is the reply a
 * continuation of this client's appends (the transport took it): it found no
 * message to extend (a clear removed it), and continuation starts name none.
 */
export function protectUnnamedReply<M extends UIMessage>(m: ChatModel<M>, reply: M): void {
  const requestId = m.turns.active ?? (m.continuation.kind === "attached" ? m.continuation.requestId : null);
  // With the socket closed it is the AI SDK flushing chunks the close cut off, not a live reply (a close ends the overlay).
  if (reply.role !== "assistant" || requestId === null || !m.turns.isLocal(requestId) || !m.link.open) return;
  const turn = m.turns.at(requestId);
  if (turn.reply !== null) return;
  turn.reply = { id: reply.id, unnamed: true };
  m.placement.protect(reply.id, m.io.loading(), true);
}

/**
 * Rule (recovered text part): a continuation that recovers an interrupted
 * turn (after a server restart) carries no `text-start` for the part that was
 * still streaming; `AIChatAgent` appends its deltas to that part. The AI SDK
 * cannot apply a delta to a part its stream never opened, so the id of the
 * part to open is returned, and the placement joins it to the interrupted part.
 */
export function droppedTextStart<M extends UIMessage>(m: ChatModel<M>, frame: ResponseFrame): string | undefined {
  const delta = readDelta(frame.body);
  const chunk = delta ? { type: delta.type, id: delta.partId } : frame.body.includes('"text-') ? chunkOf(frame) : undefined;
  if (!isRecord(chunk) || typeof chunk.id !== "string" || (chunk.type !== "text-start" && chunk.type !== "text-delta")) return undefined;
  if (m.turns.opensText(frame.id, chunk.id, chunk.type === "text-start")) return undefined;
  m.placement.resumeText();
  return chunk.id;
}

/**
 * This client's own response finished in the AI SDK. The sends of requests
 * that ended are confirmed (rule: a send retires with its request), and
 * (rule: own turn folds into the base) a reply it finished with parts is
 * held by the server: the sender gets no broadcast of its own turn.
 */
export function ownTurnFinished<M extends UIMessage>(
  m: ChatModel<M>,
  event: { message: M; messages: M[]; isAbort: boolean; isError: boolean; isDisconnect: boolean }
): void {
  const id = event.message.id;
  m.intents.sendsEnded((request) => isRunningRequest(m, request), true);
  if (m.turns.unsequenced.delete(id)) collapseReplays(m, id);
  m.placement.finished(id);
  // Rule (no empty replies): a reply this client's stream ended without a part also goes (its done may never come: a close cut it).
  if (event.message.parts.length === 0) m.turns.endedReplies.add(id);
  if (event.isAbort || event.isError || event.isDisconnect || event.message.parts.length === 0) return;
  const index = event.messages.findIndex((message) => message.id === id);
  // The reply and what came before it; an empty shell among them only if a list carried it (`shells`).
  if (index >= 0) m.base.hold(event.messages.slice(0, index + 1).filter((message) => message.role !== "assistant" || message.parts.length > 0));
}

/** A request of this client's that runs: sent, neither ended nor stopped. */
function isRunningRequest<M extends UIMessage>(m: ChatModel<M>, id: string): boolean {
  return m.turns.isRunning(id);
}

/** Rule (replayed text collapses): text a replay repeated is dropped from the replies it rebuilt (#1733, #1951). */
export function collapseReplays<M extends UIMessage>(m: ChatModel<M>, only?: string): void {
  const { rebuilt, unsequenced } = m.turns;
  const ids = only !== undefined ? [only] : [...unsequenced, ...rebuilt];
  if (ids.length === 0) return;
  const messages = m.messages;
  for (const id of ids) {
    const index = messages.findIndex((message) => message.id === id);
    const message = messages[index];
    if (!message || message.role !== "assistant") continue;
    const collapsed = collapseReplayedText(message);
    if (collapsed !== message) m.list.replaceMessage(index, collapsed);
  }
  if (only === undefined && !m.busy) rebuilt.clear();
}
