import type { UIMessage } from "ai";
import { expect, vi } from "vitest";
import { useAgentChat, type UseAgentChatOptions, type UseAgentChatReturn } from "../../src";
import { agentHost, runAgent, shape, stored } from "./e2e";
import { mountComposable } from "./mount";

export type Chat = UseAgentChatReturn<UIMessage>;

/** Mounts a component chatting with the fixture agent's conversation `name`. */
export function openChat(name: string, options: Partial<UseAgentChatOptions> = {}) {
  const mounted = mountComposable(() =>
    useAgentChat({ client: { agent: runAgent(), host: agentHost(), name }, ...options })
  );
  return { chat: mounted.result, unmount: mounted.unmount };
}

/** `openChat` whose unmount runs once, from the test or from `cleanup` (run after each test). */
export function openTracked(cleanup: Array<() => void>, name: string, options: Partial<UseAgentChatOptions> = {}) {
  const opened = openChat(name, options);
  let mounted = true;
  const unmount = () => {
    if (mounted) opened.unmount();
    mounted = false;
  };
  cleanup.push(unmount);
  return { chat: opened.chat, unmount };
}

/** Waits until the screen shows exactly what the agent stored (ids, roles, text per part). */
export async function expectScreenIsStored(chat: Chat, name: string, agent = runAgent(), timeout = 5_000): Promise<void> {
  await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name, agent))), {
    timeout,
    interval: 50
  });
}

/** Waits until the chat's socket is open. */
export async function whenOpen(chat: Chat): Promise<void> {
  await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"), { timeout: 15_000 });
}

/** Waits until the chat is idle: ready, nothing streaming, nothing queued. */
export async function whenSettled(chat: Chat, timeout = 20_000): Promise<void> {
  await vi.waitFor(
    () => {
      expect(chat.status.value).toBe("ready");
      expect(chat.isStreaming.value).toBe(false);
      expect(chat.queuedMessages.value).toHaveLength(0);
    },
    { timeout, interval: 20 }
  );
}
