import type { UIMessage } from "ai";

/**
 * What the simulated `AIChatAgent` (`./sim-agent.ts`) and the drivers that
 * run it share: the message and chunk types, the port a driver gives it, and
 * the frames it queues for this client.
 */

/** A chat message as the server stores it. */
export type M = UIMessage;
/** One part of a stored message. */
export type Part = M["parts"][number];
/** One UI message stream chunk, as the server streams it (JSON in a response frame's `body`). */
export type Chunk = Record<string, unknown>;

/** A deep copy: the server never shares an object with a client. */
export const clone = <T>(value: T): T => structuredClone(value);

/** The client broke the protocol (a frame the server does not know), or the driver misused the simulation. */
export class SimulationError extends Error {}

/** What a driver decides about one reply: its chunks, and whether (and after which chunk) it fails. */
export interface ScriptedReply {
  chunks: Chunk[];
  /** The turn fails once this many chunks went out: thrown (one error frame that ends it) or in band (an error frame, then the end). */
  fail?: { after: number; how: "thrown" | "in-band"; message?: string };
}

/** What the simulated server asks of the driver it runs in. */
export interface WorldPort {
  /** A choice of the driver's own (the property test's comes from its seed). */
  coin(): boolean;
  /** The shape of the next generated reply: bits pick the word count and a client tool call. */
  nextReplyShape(): number;
  /** A scripted reply for a turn about to be queued; without one (or when it returns undefined) the reply is generated from its shape. */
  replyFor?(turn: { requestId: string; replyId: string; continuation: boolean; messages: readonly M[]; newCallId: () => string }): ScriptedReply | undefined;
}

export type Sender = { kind: "me"; conn: number } | { kind: "other" };

/** The connection id a broadcast's `without` names: this client's connection by generation, every other client as one. */
export function connectionId(sender: Sender): string {
  return sender.kind === "me" ? `me-${sender.conn}` : "other";
}

/** The sender a connection id names. */
export function senderOf(id: string): Sender {
  return id.startsWith("me-") ? { kind: "me", conn: Number(id.slice(3)) } : { kind: "other" };
}


/**
 * How many of this client's writes of each kind the server had taken (`setMessages` lists, clears, chat requests):
 * a frame sent before it took a write of this client's can arrive after the client made it.
 */
export interface Taken {
  replaces: number;
  clears: number;
  requests: number;
}

/** A frame to this client, tagged with the connection it was sent on and what the server had taken when it sent it. */
export interface Down {
  conn: number;
  frame: Record<string, unknown>;
  taken: Taken;
  /** A transcript frame carrying what the server holds. */
  whole: boolean;
}
