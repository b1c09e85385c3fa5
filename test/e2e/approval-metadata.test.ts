import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { toRaw, watch } from "vue";
import { APPROVAL_METADATA } from "../fixtures/worker/src/script";
import { type Chat, openChat, whenOpen, whenSettled } from "../support/chat";
import { uniqueName } from "../support/e2e";

type ToolPart = UIMessage["parts"][number] & { state?: string; approval?: Record<string, unknown> };
type ToolParts = Record<string, ToolPart>;

/** The tool parts of the last message, by tool name. */
function toolParts(messages: readonly UIMessage[]): ToolParts {
  const parts = (messages.at(-1)?.parts ?? []).filter((part) => part.type.startsWith("tool-")) as ToolPart[];
  return Object.fromEntries(parts.map((part) => [part.type.slice("tool-".length), structuredClone(toRaw(part))]));
}

/**
 * The first tool parts `chat` shows with the turn's tools where the stream leaves them (guardedAction asking,
 * autoAction done), caught as they are published: with exact sync the stored copy replaces them once the turn
 * is stored, and `AIChatAgent` stores an approval's id and descriptor only.
 */
function whenAsked(chat: Chat): { parts: () => ToolParts | undefined; stop: () => void } {
  let caught: ToolParts | undefined;
  const stop = watch(
    chat.messages,
    (messages) => {
      const parts = toolParts(messages);
      if (!caught && parts.guardedAction?.state === "approval-requested" && parts.autoAction?.state === "output-available") caught = parts;
    },
    { flush: "sync" }
  );
  return { parts: () => caught, stop };
}

/** What both tabs agree on once settled: each tool's state, approval id, input and output. */
function essentials(parts: ToolParts) {
  return Object.fromEntries(
    Object.entries(parts).map(([tool, part]) => {
      const { state, approval, input, output } = part as ToolPart & { input?: unknown; output?: unknown };
      return [tool, { state, approval: approval?.id, input, output }];
    })
  );
}

describe("an approval another tab's turn asks for (issue 47, 5)", () => {
  it("the watching tab's approval parts equal the sender's, every field: descriptor, inputSchemaInput, requestReason, isAutomatic, signature", async () => {
    const name = uniqueName("approval-metadata");
    // guardedAction asks the user (reason, signature, inputSchemaInput, descriptor); autoAction is approved by the server.
    const script = {
      approvalMetadata: true,
      toolCalls: [
        { toolName: "guardedAction", input: { target: "settings" } },
        { toolName: "autoAction", input: { target: "notes" } }
      ]
    };
    // Every chunk published (no throttle), so each tab's state at the approval is seen.
    const sender = openChat(name, { body: { script }, throttle: false });
    const watcher = openChat(name, { throttle: false });
    await Promise.all([whenOpen(sender.chat), whenOpen(watcher.chat)]);
    await Promise.all([sender.chat.ready, watcher.chat.ready]);
    const sent = whenAsked(sender.chat);
    const seen = whenAsked(watcher.chat);

    await sender.chat.sendMessage({ text: "change the settings, read the notes" });
    await vi.waitFor(() => expect(seen.parts()).toBeDefined());
    sent.stop();
    seen.stop();
    // The sender's parts come from the AI SDK's own stream reader: what the watcher must match.
    const asked = sent.parts()!;
    expect(asked.guardedAction?.approval).toEqual({
      id: expect.any(String),
      descriptor: APPROVAL_METADATA.descriptor,
      inputSchemaInput: { target: "settings" },
      requestReason: APPROVAL_METADATA.reason,
      signature: expect.any(String)
    });
    expect(asked.autoAction?.approval).toEqual({
      id: expect.any(String),
      isAutomatic: true,
      signature: expect.any(String),
      approved: true,
      reason: APPROVAL_METADATA.autoReason
    });
    expect(seen.parts()).toEqual(asked);

    // Once both settle they agree on the turn. (With exact sync the sender then shows the stored copy, which
    // AIChatAgent's builder made: the approval's id and descriptor, and a toolName; the watcher keeps what it built.)
    await whenSettled(sender.chat);
    await whenSettled(watcher.chat);
    expect(essentials(toolParts(watcher.chat.messages.value))).toEqual(essentials(toolParts(sender.chat.messages.value)));
    expect(essentials(toolParts(watcher.chat.messages.value))).toEqual(essentials(asked));
    expect(watcher.chat.messages.value.map((message) => message.id)).toEqual(sender.chat.messages.value.map((message) => message.id));
    sender.unmount();
    watcher.unmount();
  });
});
