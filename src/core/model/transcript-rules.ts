import type { UIMessage } from "ai";
import { isDevelopment } from "../diagnostics";
import { Wire } from "../protocol";
import { prependMissing } from "../transcript";
import type { TranscriptRead } from "./base";
import { idle } from "./continuation";
import type { ChatModel } from "./index";
import type { QueuedSend } from "./intents";
import { toolCallIdsOf } from "./placement";

/**
 * Rule (the server's word, projected): a transcript frame replaces the
 * screen, shown through this client's intents (what a rewrite or clear
 * removed, unconfirmed sends) and its live overlays (a reply streaming here,
 * an observed turn).
 */
export function applySnapshot<M extends UIMessage>(m: ChatModel<M>, received: M[], connect: boolean): void {
  m.base.frameArrived();
  const current = m.messages;
  const shown = m.intents.shown(received, current);
  m.base.hold(shown);
  const next = m.observed.overFrame(m.placement.keepLiveReply(shown, current));
  m.replace(m.intents.restoreSends(next, current, connect));
}

/**
 * Rule (message updated, #1094): `cf_agent_message_updated` replaces the
 * message with its id, or the one holding its tool calls (the server renamed
 * it); it never appends: the message arrives by its own stream or a frame.
 */
export function applyMessageUpdate<M extends UIMessage>(m: ChatModel<M>, updated: M): void {
  m.base.frameArrived();
  const messages = m.messages;
  if (m.intents.isRetracted(updated.id, messages)) return;
  let index = messages.findIndex((message) => message.id === updated.id);
  if (index < 0) {
    const toolCallIds = new Set(toolCallIdsOf(updated));
    if (toolCallIds.size > 0) {
      index = messages.findIndex((message) => toolCallIdsOf(message).some((id) => toolCallIds.has(id)));
    }
  }
  if (index < 0) return;
  const localId = (messages[index] as M).id;
  m.base.hold([{ id: localId }, updated]);
  m.list.replaceMessage(index, { ...updated, id: localId });
}

/** A clear, sent or received: the transcript and every intent and record of it go. Returns the queued sends dropped. */
export function resetTranscript<M extends UIMessage>(m: ChatModel<M>): Array<QueuedSend<M>> {
  m.base.replacedLocally();
  m.replace([]);
  m.tools.reset();
  m.continuation = idle;
  m.streams.reset();
  m.placement.reset();
  m.io.transport.appliedChunks.clear();
  m.base.known.clear();
  return m.intents.reset();
}

/** Rule (received clear): another client cleared; the server sends the clear once done with it, so a read now sees its final transcript. */
export function receivedClear<M extends UIMessage>(m: ChatModel<M>): Array<QueuedSend<M>> {
  m.dropObserved(false);
  m.streams.heldTurn = m.streams.recoveringTurn = null;
  m.io.flags({ recovering: false });
  const dropped = resetTranscript(m);
  m.io.read(true);
  return dropped;
}

/** Rule (first load): the stored transcript goes before what is already on screen (the screen's copies win). */
export function firstReadAnswered<M extends UIMessage>(m: ChatModel<M>, read: TranscriptRead, stored: M[] | null): void {
  if (!stored || !m.base.admitFirst(read, true)) return;
  m.base.hold(stored);
  m.replace(prependMissing(stored, m.messages));
}

/**
 * A later read answered (`stored` null: it failed). Admitted answers are
 * combined with the screen by `mergeMessages`; see `TranscriptBase.admit`
 * for which are, and `LocalIntents.readSettled` for the clear they confirm.
 */
export function readAnswered<M extends UIMessage>(m: ChatModel<M>, read: TranscriptRead, stored: M[] | null): void {
  const admission = m.base.admit(read, stored !== null);
  if (admission === "retry") m.io.read(read.always, read.attempt + 1);
  const admitted = admission === "admit" ? stored : null;
  const unconfirmed = m.intents.readSettled(read.id, read.id === m.base.newestRead, admitted);
  if (unconfirmed?.size) m.remove((message) => unconfirmed.has(message.id));
  if (!admitted) return;
  m.base.hold(admitted);
  const shown = m.intents.shown(admitted, m.messages);
  let merged: M[];
  try {
    merged = m.io.settings().mergeMessages([...m.messages], shown);
  } catch (error) {
    console.error("[agents-vue] mergeMessages threw; the on-screen transcript is kept.", error);
    return;
  }
  if (!Array.isArray(merged)) {
    if (isDevelopment) console.warn("[agents-vue] mergeMessages must return an array of messages; the on-screen transcript is kept.");
    return;
  }
  m.replace(merged);
  m.placement.reanchor(merged);
}

/** Rule (no empty replies): a reply whose turn ended without a part is removed once the chat settles; `AIChatAgent` stores none. */
export function removeEmptyReplies<M extends UIMessage>(m: ChatModel<M>): void {
  const ended = m.streams.endedReplies;
  if (ended.size === 0) return;
  m.streams.endedReplies = new Set();
  m.remove((message) => ended.has(message.id) && message.role === "assistant" && message.parts.length === 0);
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
  const interrupted = [...(m.busy ? m.local : []), ...running];
  const cleared = new Set(m.messages.map((message) => message.id));
  const dropped = resetTranscript(m);
  for (const id of interrupted) if (id) m.streams.at(id).interruptedByClear = true;
  m.io.send({ type: Wire.chatClear });
  const read = cleared.size > 0 && m.link.open && canRead;
  if (read) m.intents.beginClear(cleared, m.base.newestRead);
  else m.intents.clear = null;
  return { dropped, read };
}

/** Rule (local replace): `setMessages` replaces the screen; no read that left before is admitted, and with `sync` the server gets the list. */
export function localReplace<M extends UIMessage>(m: ChatModel<M>, messages: M[], sync: boolean): void {
  m.base.replacedLocally();
  if (sync) {
    m.io.send({ type: Wire.chatMessages, messages });
    m.base.known.clear();
    m.base.hold(messages);
  }
  m.replace([...messages]);
}
