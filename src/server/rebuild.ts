import type { UIMessage } from "ai";

/**
 * Rebuilds the full transcript from a partial request.
 *
 * - Without `afterMessageId` the request carries the full list: it is returned as sent.
 * - When the first message sent is one already stored, at index k, the request
 *   rewrites in place: the stored messages before k, then the ones sent.
 * - Otherwise the messages sent are new: the whole stored transcript, then the
 *   sent messages it does not hold yet, so a client that missed messages
 *   another client added does not erase them.
 *
 * `afterMessageId` only says the list is partial; its value (the last message
 * the client saw the server hold) is a hint and may name a reply the server
 * never stored.
 */
export function rebuild<M extends UIMessage>(stored: readonly M[], sent: readonly M[], afterMessageId?: string): M[] {
  if (afterMessageId === undefined) return [...sent];
  const first = sent[0];
  const rewriteAt = first === undefined ? -1 : stored.findIndex((message) => message.id === first.id);
  if (rewriteAt >= 0) return [...stored.slice(0, rewriteAt), ...sent];
  const storedIds = new Set(stored.map((message) => message.id));
  return [...stored, ...sent.filter((message) => !storedIds.has(message.id))];
}
