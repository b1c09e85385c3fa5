import type { UIMessage } from "ai";
import { type ChatOptions, chatCells, chatConfig, chatSettings } from "../../src/core/chat";
import type { Cell } from "../../src/core/chat-state";
import { ChatSession, type SessionConfig } from "../../src/core/session";
import { FakeSocket } from "./fake-socket";

/** A plain `{ value }` cell, as a framework-free app holds one. */
export const cell = <T>(value: T): Cell<T> => ({ value });

/**
 * The shipped session in Node over a scripted socket, made by the core factory as `useAgentChat` makes it (a
 * socket it does not own, publication unthrottled), with a transcript loader that answers `stored()`.
 * `transcript` replaces the session's transcript readers: the I/O a test fails on purpose.
 */
export function nodeSession(
  stored: () => UIMessage[],
  options: ChatOptions<UIMessage> = {},
  transcript: Pick<Partial<SessionConfig<UIMessage>>, "readStored"> = {}
) {
  const socket = new FakeSocket();
  const out = chatCells<UIMessage>(cell);
  const chat: ChatOptions<UIMessage> = { getInitialMessages: async () => stored(), throttle: false, ...options };
  const target = { socket, owns: false, agent: socket.agent, name: socket.name, label: "fake-agent/room", key: "room" };
  const session = new ChatSession<UIMessage>({ ...chatConfig(chat, target, out, chatSettings(chat)), ...transcript });
  return { socket, out, session };
}
