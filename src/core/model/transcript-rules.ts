import type { UIMessage } from "ai";
import * as CHAT_MESSAGE_TYPES from "../frame-types";
import { prependMissing } from "../transcript";
import type { TranscriptRead } from "./base";
import { idle } from "./continuation";
import type { ChatModel } from "./index";
import type { QueuedSend } from "./intents";
import { indexByToolCalls, toolCallIdsOf } from "./placement";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/**
 * Rule (the server's word, projected): a transcript frame replaces the
 * screen, shown through this client's intents (what a rewrite or clear
 * removed, unconfirmed sends) and its live overlays (a reply streaming here,
 * an observed turn). Returns whether it answered the first load.
 */
export function applySnapshot<M extends UIMessage>(m: ChatModel<M>, received: M[], connect: boolean, version?: number): boolean {
  const exact = m.base.exact;
  if (!m.base.admitVersion(version)) return false;
  if (!exact && m.base.exact) m.intents.versionsBegin();
  cacheGivesWay(m);
  if (version !== undefined) m.base.messages = received;
  // Rule (connect-time transcript): a server that sends its transcript as a
  // socket connects answers the first load with it; reconnects read nothing.
  const answersFirstLoad = connect && m.base.firstLoad !== "done";
  if (connect) m.base.pushes = true;
  // Rule (server-owned history, issue 33): a connect-time transcript without a version is Think's.
  if (connect && version === undefined) m.base.serverOwned = true;
  if (answersFirstLoad) m.base.firstLoad = "done";
  m.base.frameArrived();
  m.base.seen(received);
  const current = m.messages;
  const shown = m.intents.shown(received, current);
  m.base.hold(shown);
  const next = m.observed.overFrame(m.placement.keepLiveReply(shown, current));
  m.replace(m.intents.restoreSends(next, current, connect, m.placement.protectedId));
  return answersFirstLoad;
}

/**
 * Rule (a skipped version changes nothing, exact sync): a partial frame (a
 * message update, a clear) applies only as the next version. An older one
 * was seen already; one that skips a version is not applied at all: this
 * socket missed a change, so a snapshot is asked for, and the transcript
 * comes with the answer. Frames without a version always apply.
 */
function admittedStep<M extends UIMessage>(m: ChatModel<M>, version: number | undefined): boolean {
  const step = m.base.admitStep(version);
  if (step === "gap") m.emit({ kind: "snapshot" });
  return step === "apply";
}

/**
 * Rule (message updated, #1094): `cf_agent_message_updated` replaces the
 * message with its id, or the one holding its tool calls (the server renamed
 * it); it never appends: the message arrives by its own stream or a frame.
 */
export function applyMessageUpdate<M extends UIMessage>(m: ChatModel<M>, updated: M, version?: number): void {
  if (!admittedStep(m, version)) return;
  m.base.frameArrived();
  const messages = m.messages;
  if (m.intents.isRetracted(updated.id, messages)) return;
  let index = messages.findIndex((message) => message.id === updated.id);
  if (index < 0) index = indexByToolCalls(messages, new Set(toolCallIdsOf(updated)));
  if (version !== undefined) m.base.messages = m.base.messages.map((message) => (message.id === updated.id ? updated : message));
  if (index < 0) return;
  const localId = (messages[index] as M).id;
  m.base.hold([{ id: localId }, updated]);
  m.list.replaceMessage(index, { ...updated, id: localId });
}

/**
 * Rule (reset on clear): a clear, sent or received: the transcript and every intent and record of it go. Returns the queued sends dropped.
 * Rule (held and recovering turns): the clear cancels every turn, also one this socket cannot see (its skipped done goes to the socket that sent it).
 */
export function resetTranscript<M extends UIMessage>(m: ChatModel<M>, interrupted: Array<string | null> = []): Array<QueuedSend<M>> {
  cacheGivesWay(m);
  m.base.replacedLocally();
  m.replace([]);
  m.tools.reset();
  m.continuation = idle;
  m.turns.reset(interrupted);
  m.placement.reset();
  m.base.forget();
  return m.intents.reset();
}

/**
 * Rule (the base wins when a live reply ends, exact sync): a transcript
 * frame that came while this client's reply streamed kept the live copy over
 * the stored one; once the reply ends, the stored transcript shows, if it
 * holds that reply (after a stop it is longer than the copy here). Own sends
 * it does not carry yet stay after it.
 */
export function showBase<M extends UIMessage>(m: ChatModel<M>, replyId: string | undefined): void {
  const stored = m.base.messages as M[];
  if (!m.base.exact || replyId === undefined || !stored.some((message) => message.id === replyId)) return;
  const current = m.messages;
  const next = m.observed.overFrame(m.placement.keepLiveReply(stored, current));
  const present = new Set(next.map((message) => message.id));
  const unconfirmed = current.filter((message) => m.intents.unechoed.has(message.id) && !present.has(message.id));
  m.replace(unconfirmed.length > 0 ? [...next, ...unconfirmed] : next);
}

/**
 * Rule (received clear): another client cleared; the server sends the clear
 * once done with it, so a read now sees its final transcript (an ordered
 * server's clear carries its version instead, and needs no read; it applies
 * only as the next version, see "a skipped version changes nothing").
 */
export function receivedClear<M extends UIMessage>(m: ChatModel<M>, version?: number): Array<QueuedSend<M>> {
  if (!admittedStep(m, version)) return [];
  m.base.messages = [];
  const interrupted = [...m.turns.local, ...m.turns.openTurns()];
  m.dropObserved(false);
  m.flags({ recovering: false });
  // Rule (received clear): this client's own turn it aborted (also one it stopped or watched, which may still run) may store its partial reply after the clear went out, unseen by its sender: its end reads back.
  const dropped = resetTranscript(m, interrupted);
  if (!m.base.exact) m.read(true);
  return dropped;
}

/**
 * Rule (first load): the stored transcript, shown through intents (a rewrite made while it was out
 * removed what it may still hold), goes before what is already on screen (the screen's copies win).
 * Returns whether the first load is over.
 */
export function firstReadAnswered<M extends UIMessage>(m: ChatModel<M>, read: TranscriptRead, stored: M[] | null): boolean {
  // Rule (an overtaken first load still checks): a first load something else answered first (a connect-time
  // transcript, a local replacement) shows nothing, but its answer still says what the server held after it left:
  // an adopted send's check counts it, and the outbox looks again; if it failed, a waiting check gets a read of its own.
  if (m.base.firstLoad !== read) {
    m.base.readSettled(read, stored);
    if (!m.intents.queued.some((entry) => entry.check !== undefined)) return true;
    if (stored) m.reconcile();
    else m.read(true);
    return true;
  }
  // Rule (a failed read keeps the cache, `persist`): a first read that did not reach the agent leaves the
  // cached transcript and the first load waiting: the next frame (the agent is back) reads again.
  if (!stored && m.cached) {
    m.base.firstLoad = "waiting";
    return false;
  }
  m.base.firstLoad = "done";
  m.base.readSettled(read, stored);
  // Rule (an adopted send waits for a check): a first load that failed answers no check, so a read is made (and
  // made again until one answers, see `readAnswered`).
  if (!stored && m.intents.queued.some((entry) => entry.check !== undefined)) m.read(true);
  // Rule (queued sends): sends queued while the load was out may go now, also when its answer changes nothing.
  m.reconcile();
  if (!stored) return true;
  // A first load made again after a clear (its first try failed) is the read the clear waits for.
  const admitted = settleClear(m, read, m.base.admitFirst(read, true) ? stored : null);
  if (!admitted) return true;
  cacheGivesWay(m);
  m.base.seen(stored);
  const current = m.messages;
  const shown = m.intents.shown(admitted, current);
  m.base.hold(shown);
  m.replace(prependMissing(shown, current));
  return true;
}

/**
 * Rule (later reads merge): a later read answered (`stored` null: it failed). Admitted answers are
 * combined with the screen by `mergeMessages`; see `TranscriptBase.admit`
 * for which are, and `LocalIntents.readSettled` for the clear they confirm.
 */
export function readAnswered<M extends UIMessage>(m: ChatModel<M>, read: TranscriptRead, stored: M[] | null): void {
  const admission = m.base.admit(read, stored !== null);
  m.base.readSettled(read, stored);
  // Rule (an adopted send waits for a check): the outbox looks again once the check came back.
  if (m.intents.queued.some((entry) => entry.check !== undefined)) m.reconcile();
  if (admission === "retry") m.read(read.always, read.attempt + 1);
  // Rule (a failed read is made again): no answer says nothing about the transcript. The shell makes the read
  // again after a pause (`TranscriptReads`), and what waits for it (a clear's hold) waits for that one.
  if (stored === null) return;
  const admitted = settleClear(m, read, admission === "admit" ? stored : null);
  if (!admitted) return;
  cacheGivesWay(m);
  m.base.hold(admitted);
  const writing = m.turns.anyLocal;
  const removed = m.base.removedBefore(read, stored, writing);
  // Rule (a cut reply stays only if stored): not by a read a list of this client's can overtake (it may carry the reply).
  if (!m.base.wroteSince(read, writing)) for (const reply of m.turns.unstoredCutReplies(read.id, stored)) removed.add(reply);
  m.base.seen(stored);
  const shown = m.intents.shown(admitted, m.messages);
  const live = m.placement.protectedId;
  const onScreen = withoutUnnamedReplies(m, shown).filter((message) => !removed.has(message.id) || message.id === live);
  let merged: M[];
  try {
    merged = m.io.settings().mergeMessages(onScreen, shown);
  } catch (error) {
    console.error("[agents-vue] mergeMessages threw; the on-screen transcript is kept.", error);
    return;
  }
  if (!Array.isArray(merged)) {
    if (process.env.NODE_ENV !== "production") console.warn("[agents-vue] mergeMessages must return an array of messages; the on-screen transcript is kept.");
    return;
  }
  m.replace(m.placement.keepLiveCopy(merged, m.messages, m.busy));
}

/**
 * Rule (clear retires): an answered read, a first load or a later one, may be
 * the read a clear of this client's waits for (`LocalIntents.readSettled`):
 * what arrived during the hold and the answer lacks goes. Returns the
 * admitted answer (null: not admitted) less what the clear removed.
 */
function settleClear<M extends UIMessage>(m: ChatModel<M>, read: TranscriptRead, admitted: M[] | null): M[] | null {
  const ended = m.intents.readSettled(read.id, read.id === m.base.newestRead, admitted);
  if (ended?.unconfirmed.size) m.remove((message) => ended.unconfirmed.has(message.id));
  return admitted && ended ? admitted.filter((message) => !ended.cleared.has(message.id)) : admitted;
}

/**
 * Rule (unnamed reply gives way, issue 22, 1): the screen a read merges with.
 * Once the stored transcript carries an assistant message the screen lacks,
 * ended replies that streamed without an id give way to it: it is their
 * stored copy, under the server's id.
 */
function withoutUnnamedReplies<M extends UIMessage>(m: ChatModel<M>, stored: readonly M[]): M[] {
  const onScreen = [...m.messages];
  const unnamed = m.turns.unnamedReplies;
  if (unnamed.size === 0) return onScreen;
  const shown = new Set(onScreen.map((message) => message.id));
  if (!stored.some((message) => message.role === "assistant" && !shown.has(message.id))) return onScreen;
  const ended = new Set([...unnamed].filter((id) => m.placement.protectedId !== id));
  for (const id of ended) unnamed.delete(id);
  return onScreen.filter((message) => !ended.has(message.id));
}

/**
 * Exact sync: once the chat settles, the replies whose end leaves them to the
 * stored transcript go if it lacks them at the version held (the agent writes
 * a reply before its `done` goes out, so that version already says): rule (a
 * cut reply stays only if stored), and rule (unnamed reply gives way): a
 * reply built under an id of this client's (its stream named none), whose
 * stored copy the agent keeps under its own.
 */
export function settleEndedReplies<M extends UIMessage>(m: ChatModel<M>): void {
  if (!m.base.exact) return;
  const { cutReplies, unnamedReplies } = m.turns;
  m.dropUnstored({ has: (id) => cutReplies.has(id) || unnamedReplies.has(id) });
  cutReplies.clear();
  unnamedReplies.clear();
}

/** Rule (no empty replies): a reply whose turn ended without a part is removed once the chat settles; `AIChatAgent` stores none (a shell the server stores stays, see `TranscriptBase.shells`). */
export function removeEmptyReplies<M extends UIMessage>(m: ChatModel<M>): void {
  const ended = m.turns.endedReplies;
  if (ended.size === 0) return;
  m.turns.endedReplies = new Set();
  const stored = m.base.shells;
  m.remove((message) => ended.has(message.id) && message.role === "assistant" && message.parts.length === 0 && !stored.has(message.id));
}

/**
 * Rule (local clear): the turns it interrupts read back when they end (the
 * server can store a partial reply after it emptied the transcript), and as
 * the server does not echo a clear to its sender, the cleared messages are
 * held back until a read made now answers (it needs a reader, and an open
 * socket so that the clear reaches the server first). Returns the queued
 * sends dropped, and whether to read.
 */
export function localClear<M extends UIMessage>(
  m: ChatModel<M>,
  running: Array<string | null>,
  canRead: boolean
): { dropped: Array<QueuedSend<M>>; read: boolean } {
  // Every request this client still streams: the AI SDK says ready once the last of concurrent ones ends.
  const turns = m.turns;
  const interrupted = [...turns.local, ...running, ...turns.openTurns()];
  const cleared = new Set(m.messages.map((message) => message.id));
  const extended = m.messages.findLast((message) => message.role === "assistant")?.id;
  // The server stores the interrupted turn's partial reply after it empties the transcript: that one may come back,
  // whether this client streams it, watches it, or lost sight of it with a socket drop (a held turn).
  for (const id of [...interrupted, turns.active, m.observed.streamId, turns.heldTurn]) {
    if (id === null) continue;
    const turn = turns.get(id);
    const reply = turn?.reply?.id ?? turn?.shown ?? (id === m.observed.streamId ? m.observed.message?.id : undefined);
    if (reply != null) cleared.delete(reply);
  }
  const dropped = resetTranscript(m, interrupted);
  m.send({ type: CHAT_MESSAGE_TYPES.CHAT_CLEAR });
  // Rule (local clear): also with nothing on screen, a broadcast the server sent before the clear may still come.
  const read = m.link.open && canRead && !m.base.exact;
  if (read) m.intents.beginClear(cleared, m.base.newestRead, extended);
  else m.intents.clear = null;
  return { dropped, read };
}

let warnedServerOwned = false;

/**
 * Rule (local replace): `setMessages` replaces the screen; no read that left
 * before is admitted, and with `sync` the server gets the list.
 * Rule (server-owned history, issue 33): not a server that owns its history
 * (Think): it ignores the list, so the change stays on this screen (a
 * development warning says so once, as upstream's Think client does).
 */
export function localReplace<M extends UIMessage>(m: ChatModel<M>, messages: M[], sync: boolean): void {
  cacheGivesWay(m);
  m.base.replacedLocally();
  if (sync && m.base.serverOwned) {
    if (process.env.NODE_ENV !== "production" && !warnedServerOwned) {
      warnedServerOwned = true;
      console.warn(
        "[agents-vue] setMessages changed this screen only: this agent (Think) keeps its own history and ignores a transcript a client sends. " +
          "Use clearHistory() to clear it on the server; pass syncMessagesToServer: false to say so and silence this warning."
      );
    }
  } else if (sync) {
    m.send({ type: CHAT_MESSAGE_TYPES.CHAT_MESSAGES, messages });
    m.base.listWritten();
    m.base.known.clear();
    m.base.hold(messages);
  }
  m.replace([...messages]);
}

/**
 * Rule (cached transcript first, `persist`): a transcript cached by an
 * earlier page shows at once while the first load is out, as long as
 * nothing else is on screen and no server transcript came. Returns whether
 * it shows.
 */
export function showCached<M extends UIMessage>(m: ChatModel<M>, cached: M[]): boolean {
  if (!m.io.loading() || m.base.moved || m.messages.length > 0 || cached.length === 0) return false;
  m.cached = new Set(cached.map((message) => message.id));
  m.replace([...cached]);
  m.flags({ cached: true });
  return true;
}

/**
 * Rule (the cache gives way): the server's transcript (a frame, an admitted
 * read) or a local replacement ends the cached one: every cached message
 * leaves the screen before the server's list is placed, so a message the
 * server no longer holds goes and the server's copies win. Sends made
 * meanwhile stay.
 */
function cacheGivesWay<M extends UIMessage>(m: ChatModel<M>): void {
  const cached = m.cached;
  if (!cached) return;
  m.cached = null;
  m.remove((message) => cached.has(message.id));
  m.flags({ cached: false });
}
