import * as CHAT_MESSAGE_TYPES from "./frame-types";

type Listener = (event: MessageEvent) => void;

/** A listener on a direct lane: true when it read the frame as a chat response. */
export type DirectListener = (event: MessageEvent) => boolean;
/** Sockets with a direct lane (see `openDirectLane`), and how to join it. */
const lanes = new WeakMap<object, (listener: DirectListener) => () => void>();
/** What `openDirectLane` uses of PartySocket: the handler its native socket's messages go to, set per instance. */
interface PartySocketInternals {
  _handleMessage?: (event: MessageEvent) => void;
  _ws?: unknown;
  onmessage?: unknown;
  addEventListener(type: string, listener: Listener, options?: unknown): void;
  removeEventListener(type: string, listener: Listener, options?: unknown): void;
}
/** The top-level `type` of a response frame as JSON writes it (inside a string value its quotes would be escaped). */
const RESPONSE_TYPE = `"type":"${CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE}"`;

/**
 * Rule (a chat's own socket hands it its frames directly). PartySocket
 * re-creates every `MessageEvent` it passes on, and `AgentClient` parses
 * every frame, though only the chat reads response frames: most of a fast
 * stream's cost beyond a bare WebSocket. On a socket the chat opened itself
 * (`client`), the chat takes a response frame straight from the native
 * socket, and it goes no further unless something else listens for messages
 * on the socket (a listener added to `client`, or `onmessage`). Every other
 * frame goes the usual way, `AgentClient`'s own listener first. A socket that
 * is not such a PartySocket, or already connecting, keeps its events.
 */
export function openDirectLane(socket: object): void {
  const raw = socket as PartySocketInternals;
  const dispatch = raw._handleMessage;
  if (typeof dispatch !== "function" || raw._ws !== undefined) return;
  const direct = new Set<DirectListener>();
  const others = new Set<Listener>();
  const add = raw.addEventListener.bind(raw);
  const remove = raw.removeEventListener.bind(raw);
  raw.addEventListener = (type, listener, options) => {
    if (type === "message") others.add(listener);
    add(type, listener, options);
  };
  raw.removeEventListener = (type, listener, options) => {
    if (type === "message") others.delete(listener);
    remove(type, listener, options);
  };
  raw._handleMessage = (event) => {
    const data: unknown = event.data;
    if (direct.size === 0 || typeof data !== "string" || !data.includes(RESPONSE_TYPE)) {
      dispatch(event);
      for (const listener of direct) listener(event);
      return;
    }
    let read = false;
    for (const listener of direct) read = listener(event) || read;
    if (!read || others.size > 0 || raw.onmessage) dispatch(event);
  };
  lanes.set(socket, (listener) => {
    direct.add(listener);
    return () => direct.delete(listener);
  });
}

/** How a chat joins the direct lane of `socket` (it returns how to leave), or undefined when it has none. */
export const laneOf = (socket: object) => lanes.get(socket);
