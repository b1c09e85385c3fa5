/**
 * Exact sync end to end: `useAgentChat` against the fixture's ordered agent
 * (`OrderedChatAgent`, the stock agent plus `orderTranscript`), whatever agent
 * the run is about. The wire contract itself is `ordered.test.ts`'s.
 */
import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { mountComposable } from "../support/mount";
import { agentHost, post, readLog, shape, stored, textOf, uniqueName } from "../support/e2e";

const ORDERED = "OrderedChatAgent";

/** A chat on the ordered agent that records the version of every transcript frame it is handed. */
function openExact(name: string, body: Record<string, unknown> = {}) {
  const versions: number[] = [];
  const mounted = mountComposable(() =>
    useAgentChat({
      client: { agent: ORDERED, host: agentHost(), name },
      body,
      onFrame: (frame) => {
        const version = (frame as { version?: unknown } | null)?.version;
        if (typeof version === "number") versions.push(version);
      }
    })
  );
  return { chat: mounted.result, unmount: mounted.unmount, versions };
}

describe("exact sync with useAgentChat", () => {
  it("an eviction mid-conversation: the chat reconnects, versions keep going up, and it ends with the stored transcript", async () => {
    const name = uniqueName("exact-evict");
    const { chat, unmount, versions } = openExact(name, { script: { chunks: 30, chunkDelayMs: 20 } });
    await chat;
    await chat.sendMessage({ text: "first" });
    await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name, ORDERED))));
    const before = Math.max(...versions);
    const second = chat.sendMessage({ text: "second" });
    await vi.waitFor(() => expect(textOf(chat.messages.value[3]).length).toBeGreaterThan(10));
    // Reset the Durable Object mid-turn, as an eviction would: every socket drops.
    expect((await post(name, "crash", {}, ORDERED)).status).toBe(202);
    await second.catch(() => {});
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"), { timeout: 20_000 });
    await chat.sendMessage({ text: "third" });
    await vi.waitFor(async () => expect(shape(chat.messages.value)).toEqual(shape(await stored(name, ORDERED))), { timeout: 15_000 });
    expect(textOf(chat.messages.value.at(-1))).toBe(expectedText(30));
    // Frames arrive in version order on a socket, and the new one's connect frame starts at least where the old left off.
    const afterCrash = versions.slice(versions.indexOf(before) + 1);
    expect(afterCrash.every((version) => version >= before)).toBe(true);
    expect(Math.max(...versions)).toBeGreaterThan(before);
    unmount();
  });

  it("no HTTP read after the first chat of the page: a second chat waits for the connect-time transcript", async () => {
    const name = uniqueName("exact-reads");
    const first = openExact(name);
    await first.chat;
    await first.chat.sendMessage({ text: "hello" });
    first.unmount();
    const second = openExact(name);
    await second.chat;
    await vi.waitFor(async () => expect(shape(second.chat.messages.value)).toEqual(shape(await stored(name, ORDERED))));
    const reads = (await readLog(name, ORDERED)).filter((entry) => entry.kind === "get-messages");
    // At most the page's first chat read, before it had seen this agent push (another test's chat may have).
    expect(reads.length).toBeLessThanOrEqual(1);
    expect(second.chat.messages.value.map((m: UIMessage) => m.role)).toEqual(["user", "assistant"]);
    second.unmount();
  });
});
