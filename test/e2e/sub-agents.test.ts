/**
 * Sub-agent addressing (`sub`): a chat with a `ScriptedChatAgent` that lives
 * as a facet of a `ChatRoomParent`, at
 * `/agents/chat-room-parent/<parent>/sub/scripted-chat-agent/<child>`.
 */
import { describe, expect, it, vi } from "vitest";
import { nextTick, ref } from "vue";
import { type SubAgentStep, useAgent, useAgentChat } from "../../src";
import { expectedText } from "../fixtures/worker/src/script";
import { agentHost, agentOrigin, readLog, textOf, uniqueName } from "../support/e2e";

/** The child class: the fixture's stock chat agent, whichever agent the run is about. */
const CHAT_AGENT = "ScriptedChatAgent";
import { mountComposable } from "../support/mount";
import { whenSettled } from "../support/chat";
import type { UIMessage } from "ai";

const PARENT = "ChatRoomParent";
const PARENT_PATH = "chat-room-parent";
const childUrl = (parent: string, child: string) =>
  `${agentOrigin()}/agents/${PARENT_PATH}/${parent}/sub/scripted-chat-agent/${encodeURIComponent(child)}`;

async function childLog(parent: string, child: string) {
  const response = await fetch(`${childUrl(parent, child)}/log`);
  expect(response.ok).toBe(true);
  return ((await response.json()) as { entries: Array<{ kind: string; [key: string]: unknown }> }).entries;
}

async function childStored(parent: string, child: string): Promise<UIMessage[]> {
  const response = await fetch(`${childUrl(parent, child)}/stored`);
  expect(response.ok).toBe(true);
  return (await response.json()) as UIMessage[];
}

describe("sub-agent addressing", () => {
  it("useAgentChat({ client: { sub } }) chats with the sub-agent: the parent routes it, the child stores the turn", async () => {
    const parent = uniqueName("parent");
    const child = uniqueName("child");
    const { result: chat, unmount } = mountComposable(() =>
      useAgentChat({ client: { agent: PARENT, name: parent, host: agentHost(), sub: [{ agent: CHAT_AGENT, name: child }] } })
    );
    await chat.sendMessage({ text: "hello child" });
    await whenSettled(chat);
    expect(textOf(chat.messages.value.at(-1))).toBe(expectedText());
    // The chat is the child's conversation.
    expect(chat.id.value.startsWith(`scripted-chat-agent/${child}|`)).toBe(true);

    // The parent saw the upgrade and the transcript read go to its child; the child holds the turn.
    const parentLog = await readLog(parent, PARENT);
    expect(parentLog.filter((entry) => entry.kind === "sub-agent").map(({ className, name, upgrade }) => ({ className, name, upgrade }))).toEqual(
      expect.arrayContaining([
        { className: CHAT_AGENT, name: child, upgrade: true },
        { className: CHAT_AGENT, name: child, upgrade: false }
      ])
    );
    expect((await childLog(parent, child)).some((entry) => entry.kind === "get-messages")).toBe(true);
    expect((await childStored(parent, child)).map((message) => message.role)).toEqual(["user", "assistant"]);
    unmount();
  });

  it("a new sub step switches the chat to that child without remounting", async () => {
    const parent = uniqueName("parent");
    const sub = ref<SubAgentStep[]>([{ agent: CHAT_AGENT, name: uniqueName("first") }]);
    const { result: chat, unmount } = mountComposable(() =>
      useAgentChat({ client: { agent: PARENT, name: parent, host: agentHost(), sub } })
    );
    await chat.sendMessage({ text: "to the first" });
    await whenSettled(chat);
    const firstChild = sub.value[0]!.name;

    const secondChild = uniqueName("second");
    sub.value = [{ agent: CHAT_AGENT, name: secondChild }];
    await nextTick();
    expect(chat.messages.value).toEqual([]);
    await vi.waitFor(() => expect(chat.connectionStatus.value).toBe("open"));
    await chat.sendMessage({ text: "to the second" });
    await whenSettled(chat);
    expect((await childStored(parent, secondChild)).map((message) => textOf(message))[0]).toBe("to the second");
    expect((await childStored(parent, firstChild)).map((message) => textOf(message))[0]).toBe("to the first");
    unmount();
  });

  it("useAgent({ sub }): identity and getHttpUrl name the child, path lists the chain, a chat over it talks to the child, and a new step reconnects (rule 115)", async () => {
    const parent = uniqueName("parent");
    const first = uniqueName("c1");
    const sub = ref<SubAgentStep[]>([{ agent: CHAT_AGENT, name: first }]);
    const { result, unmount } = mountComposable(() => {
      const agent = useAgent({ agent: PARENT, name: parent, host: agentHost(), sub });
      return { agent, chat: useAgentChat({ agent }) };
    });
    const { agent, chat } = result;
    expect(agent.path.value).toEqual([
      { agent: PARENT, name: parent },
      { agent: CHAT_AGENT, name: first }
    ]);
    await agent.ready;
    expect(agent.identity.value).toEqual({ agent: "scripted-chat-agent", name: first });
    expect(agent.getHttpUrl()).toBe(childUrl(parent, first));
    await chat.sendMessage({ text: "over the shared socket" });
    await whenSettled(chat);
    expect((await childStored(parent, first)).map((message) => message.role)).toEqual(["user", "assistant"]);

    const second = uniqueName("c2");
    sub.value = [{ agent: CHAT_AGENT, name: second }];
    await nextTick();
    expect(agent.identity.value).toBeNull();
    // Never the previous address (rule 115): the client moved with the address.
    expect(agent.getHttpUrl()).toBe(childUrl(parent, second));
    await agent.ready;
    expect(agent.identity.value).toEqual({ agent: "scripted-chat-agent", name: second });
    expect(agent.path.value.at(-1)).toEqual({ agent: CHAT_AGENT, name: second });
    // The chat moved with the shared socket to the new child.
    await chat.sendMessage({ text: "now the second" });
    await whenSettled(chat);
    expect((await childStored(parent, second)).map((message) => textOf(message))[0]).toBe("now the second");
    unmount();
  });

  it("a sub step without a name warns once and is sent as an empty segment", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const { result: agent, unmount } = mountComposable(() =>
        useAgent({ agent: PARENT, name: uniqueName("parent"), host: agentHost(), sub: [{ agent: CHAT_AGENT, name: "" }], startClosed: true })
      );
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/sub: step 0 needs a non-empty "agent" and "name"/));
      expect(agent.status.value).toBe("closed");
      unmount();
    } finally {
      warn.mockRestore();
    }
  });
});
