/**
 * What upstream's Think chat server (`ThinkChat` over `ThinkHarness`, the
 * fixture's `ThinkChatAgent`) puts on the wire: a connect-time transcript
 * without a version. The client half that reads it is tested elsewhere.
 */
import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { expectedText } from "../fixtures/worker/src/script";
import { agentUrl, post, uniqueName } from "../support/e2e";
import { RawSocket, chatRequest, userMessage, type Frame } from "../support/raw-socket";

const THINK = "ThinkChatAgent";

const isConnectFrame = (frame: Frame) => frame.type === "cf_agent_chat_messages" && frame.connect === true;

async function getMessages(name: string): Promise<UIMessage[]> {
  const response = await fetch(`${agentUrl(name, THINK)}/get-messages`);
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}

describe("Think chat server: the connect-time transcript", () => {
  it("sends the stored transcript on every connect, without a version, before any resume offer", async () => {
    const name = uniqueName("think");
    expect((await post(name, "script", { chunks: 20, chunkDelayMs: 50 }, THINK)).ok).toBe(true);
    const a = await RawSocket.open(THINK, name);
    const first = await a.waitFor(isConnectFrame);
    expect(first).toEqual({ type: "cf_agent_chat_messages", messages: [], connect: true });

    a.send(chatRequest("r1", [userMessage("u1", "hello think")]));
    await a.waitFor((frame) => frame.type === "cf_agent_use_chat_response" && String(frame.body).includes("text-delta"));
    // Mid-stream: the transcript so far (the user message), then the offer to resume.
    const b = await RawSocket.open(THINK, name);
    const resuming = await b.waitFor((frame) => frame.type === "cf_agent_stream_resuming");
    const midStream = b.frames.find(isConnectFrame);
    expect(b.frames.indexOf(midStream!)).toBeLessThan(b.frames.indexOf(resuming));
    expect((midStream!.messages as UIMessage[]).map((message) => message.id)).toEqual(["u1"]);

    await a.done("r1");
    const c = await RawSocket.open(THINK, name);
    const after = await c.waitFor(isConnectFrame);
    const messages = after.messages as UIMessage[];
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(messages[1]!.parts.filter((part) => part.type === "text").map((part) => (part as { text: string }).text).join("")).toBe(
      expectedText(20)
    );
    // The same transcript the HTTP read serves, and no frame from Think carries a version.
    expect(messages).toEqual(await getMessages(name));
    for (const socket of [a, b, c]) {
      expect(socket.frames.filter((frame) => "version" in frame)).toEqual([]);
      socket.close();
    }
  });
});
