import type { UIMessage } from "ai";
import { CHAT_MESSAGE_TYPES } from "agents/chat";
import { installingMixin, type HostClass } from "./mixin";
import { rebuild } from "./rebuild";

const CHAT_REQUEST = CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST;

/** What the rewrite needs from an agent: its stored messages and its socket handler. */
export interface PartialRequestHost {
  /** The stored transcript (`AIChatAgent#messages`). */
  readonly messages: UIMessage[];
  /** The WebSocket message handler (`AIChatAgent#onMessage`, wrapped by its constructor). */
  onMessage(connection: never, message: never): unknown;
}

/**
 * Rewrites one incoming frame: a chat request whose body names
 * `afterMessageId` gets the full transcript rebuilt from `stored`, and the
 * field removed. Every other frame (and any frame that does not parse) comes
 * back unchanged.
 */
export function rebuildRequestFrame(frame: unknown, stored: readonly UIMessage[]): unknown {
  if (typeof frame !== "string" || !frame.includes(CHAT_REQUEST)) return frame;
  let data: { type?: unknown; init?: { body?: unknown } };
  try {
    data = JSON.parse(frame);
  } catch {
    return frame;
  }
  if (data.type !== CHAT_REQUEST || typeof data.init?.body !== "string") return frame;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(data.init.body);
  } catch {
    return frame;
  }
  const after = body.afterMessageId;
  if (typeof after !== "string" || !Array.isArray(body.messages)) return frame;
  const { afterMessageId: _hint, ...rest } = body;
  const messages = rebuild(stored, body.messages as UIMessage[], after);
  return JSON.stringify({ ...data, init: { ...data.init, body: JSON.stringify({ ...rest, messages }) } });
}

/**
 * Makes an `AIChatAgent` accept partial requests from clients using
 * `sendOnlyNewMessages`. Call it in the agent's constructor, after `super()`:
 * the full transcript is rebuilt before the agent persists the request or
 * broadcasts it to other connections.
 *
 * ```ts
 * export class ChatAgent extends AIChatAgent<Env> {
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env);
 *     acceptPartialRequests(this);
 *   }
 * }
 * ```
 */
export function acceptPartialRequests(agent: PartialRequestHost): void {
  const handle = agent.onMessage.bind(agent) as (connection: unknown, message: unknown) => unknown;
  agent.onMessage = ((connection: unknown, message: unknown) =>
    handle(connection, rebuildRequestFrame(message, agent.messages))) as PartialRequestHost["onMessage"];
}

/**
 * A class mixin form of {@link acceptPartialRequests}:
 *
 * ```ts
 * export class ChatAgent extends withPartialRequests(AIChatAgent)<Env> { ... }
 * ```
 */
export function withPartialRequests<T extends HostClass<object>>(Base: T & HostClass<PartialRequestHost>): T {
  return installingMixin(Base, acceptPartialRequests);
}
