/**
 * Regression tests for failures the chaos suite found against the real
 * `AIChatAgent` (RELIABILITY.md lists them).
 */
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { openChat, whenSettled } from "../support/chat";
import { agentUrl, readLog, shape, textOf, uniqueName } from "../support/e2e";

async function serverMessages(name: string): Promise<UIMessage[]> {
  return (await (await fetch(`${agentUrl(name)}/get-messages`)).json()) as UIMessage[];
}

describe("a clear that interrupts a turn (chaos: many clients)", () => {
  // AIChatAgent aborts the running turn on a clear and stores its partial reply after it
  // emptied the transcript; its clear broadcast arrives after that reply's frames.
  for (const who of ["the sender", "a watcher"] as const) {
    it(`clear by ${who} mid-stream: both clients end with the server's transcript`, async () => {
      const name = uniqueName("clearrace");
      const sender = openChat(name, { body: { script: { chunks: 40, chunkDelayMs: 20 } } });
      const watcher = openChat(name);
      await Promise.all([sender.chat.ready, watcher.chat.ready]);
      void sender.chat.sendMessage({ text: "one" });
      await vi.waitFor(() => {
        expect(textOf(sender.chat.messages.value[1]).length).toBeGreaterThan(20);
        expect(textOf(watcher.chat.messages.value[1]).length).toBeGreaterThan(20);
      });
      (who === "the sender" ? sender : watcher).chat.clearHistory();
      await vi.waitFor(async () => expect((await readLog(name)).some((e) => e.kind === "turn-finished")).toBe(true));
      await whenSettled(sender.chat);
      await whenSettled(watcher.chat);
      await vi.waitFor(async () => {
        const stored = shape(await serverMessages(name));
        expect(shape(sender.chat.messages.value)).toEqual(stored);
        expect(shape(watcher.chat.messages.value)).toEqual(stored);
      });
      sender.unmount();
      watcher.unmount();
    });
  }
});
