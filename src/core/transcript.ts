import type { UIMessage } from "ai";

/**
 * The default reconnect policy: merge by id, the stored copy wins, and
 * messages only on screen (a question typed while the socket was down, a
 * reply the read raced) are kept after the stored ones, in their order.
 */
export function mergeStoredWins<M extends UIMessage>(onScreen: readonly M[], stored: readonly M[]): M[] {
  const storedIds = new Set(stored.map((message) => message.id));
  return [...stored, ...onScreen.filter((message) => !storedIds.has(message.id))];
}

/**
 * A transcript that arrives after messages were already on screen: what only
 * the transcript has goes first, the on-screen copies win (they can be newer).
 */
export function prependMissing<M extends UIMessage>(loaded: readonly M[], current: readonly M[]): M[] {
  const present = new Set(current.map((message) => message.id));
  return [...loaded.filter((message) => !present.has(message.id)), ...current];
}

/** Moves a message to the end of the list; the same array when nothing moves. */
export function moveToEnd<M extends UIMessage>(messages: M[], id: string): M[] {
  const index = messages.findIndex((message) => message.id === id);
  if (index < 0 || index === messages.length - 1) return messages;
  const next = messages.slice();
  const [message] = next.splice(index, 1);
  next.push(message as M);
  return next;
}

/**
 * Drops text parts whose text is a prefix of a later text part: the trace a
 * replay leaves when it rebuilds a message that was already partly on screen.
 */
export function collapseReplayedText<M extends UIMessage>(message: M): M {
  const parts = message.parts;
  const kept = parts.filter((part, index) => {
    if (part.type !== "text" || !part.text) return true;
    return !parts.some(
      (later, laterIndex) =>
        laterIndex > index && later.type === "text" && !!later.text && later.text.startsWith(part.text)
    );
  });
  return kept.length === parts.length ? message : { ...message, parts: kept };
}

/** What a request carries when `sendOnlyNewMessages` is on. */
export interface TrimmedRequest<M extends UIMessage> {
  messages: M[];
  afterMessageId?: string;
}

/**
 * The part of the transcript the server does not hold yet. A request that
 * rewrites a message in place (an edited question, an assistant message
 * resubmitted after a tool output or approval) starts at that message; any
 * other request starts after the last message the server is known to hold.
 * Without a known message before the slice the full list goes, and no
 * `afterMessageId`.
 */
export function trimForServer<M extends UIMessage>(
  messages: readonly M[],
  known: ReadonlySet<string>,
  rewrittenId?: string
): TrimmedRequest<M> {
  let start: number;
  if (rewrittenId !== undefined) {
    start = messages.findIndex((message) => message.id === rewrittenId);
    if (start < 0) return { messages: [...messages] };
  } else {
    let lastKnown = -1;
    for (let index = messages.length - 1; index >= 0; index--) {
      if (known.has((messages[index] as M).id)) {
        lastKnown = index;
        break;
      }
    }
    start = lastKnown + 1;
  }
  const anchor = messages[start - 1];
  // At start 0 there is no anchor (`messages[-1]` is undefined).
  if (anchor === undefined || !known.has(anchor.id)) return { messages: [...messages] };
  return { messages: messages.slice(start), afterMessageId: anchor.id };
}
