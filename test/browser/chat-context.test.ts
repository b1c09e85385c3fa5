import type { UIMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import { createApp, defineComponent, h, type Component, type InjectionKey } from "vue";
import { injectAgentChat, provideAgentChat, useAgentChat, type UseAgentChatReturn } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";

/** Mounts `root` in a fresh app; what a setup throws lands in `errors` (Vue's errorHandler). */
function mount(root: Component) {
  const host = document.createElement("div");
  document.body.appendChild(host);
  const app = createApp(root);
  const errors: unknown[] = [];
  app.config.errorHandler = (error) => void errors.push(error);
  app.mount(host);
  return {
    host,
    errors,
    unmount: () => {
      app.unmount();
      host.remove();
    }
  };
}

const textOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

describe("provideAgentChat / injectAgentChat", () => {
  it("a sidebar, a message list and a composer in different components share one chat", async () => {
    const socket = new FakeSocket();
    const seen: Record<string, UseAgentChatReturn> = {};
    const Sidebar = defineComponent({
      setup() {
        const chat = (seen.sidebar = injectAgentChat());
        return () => h("aside", { "data-testid": "sidebar" }, `${chat.messages.value.length} messages · ${chat.displayStatus.value}`);
      }
    });
    const MessageList = defineComponent({
      setup() {
        const chat = (seen.list = injectAgentChat());
        return () => h("ol", chat.messages.value.map((message) => h("li", { key: message.id }, textOf(message))));
      }
    });
    const Composer = defineComponent({
      setup() {
        const chat = (seen.composer = injectAgentChat());
        return () => h("button", { onClick: () => void chat.sendMessage({ text: "hello" }) }, "Send");
      }
    });
    const Page = defineComponent({
      setup() {
        seen.page = provideAgentChat({ agent: socket, initialMessages: [] as UIMessage[], resume: false });
        return () => h("div", [h(Sidebar), h(MessageList), h(Composer)]);
      }
    });
    const { host, unmount } = mount(Page);
    expect(seen.list).toBe(seen.page);
    expect(seen.composer).toBe(seen.page);
    expect(seen.sidebar).toBe(seen.page);

    socket.open();
    host.querySelector("button")!.click();
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const request = socket.sentOf("cf_agent_use_chat_request")[0] as { id: string };
    for (const chunk of textReply("a1", ["Hi ", "there"])) socket.chunk(request.id, chunk);
    socket.done(request.id);
    await vi.waitFor(() => expect(host.querySelectorAll("li")).toHaveLength(2));
    expect([...host.querySelectorAll("li")].map((item) => item.textContent)).toEqual(["hello", "Hi there"]);
    await vi.waitFor(() => expect(host.querySelector("[data-testid=sidebar]")!.textContent).toBe("2 messages · ready"));
    unmount();
    expect(socket.listenerCount).toBe(0);
  });

  it("provides a chat the component already opened, and a typed key keeps two chats apart", () => {
    const main = new FakeSocket();
    const side = new FakeSocket();
    type Note = UIMessage<{ pinned: boolean }>;
    const sideKey: InjectionKey<UseAgentChatReturn<Note>> = Symbol("side assistant");
    const seen: { main?: UseAgentChatReturn; side?: UseAgentChatReturn<Note>; opened?: UseAgentChatReturn; provided?: UseAgentChatReturn<Note> } = {};
    const Child = defineComponent({
      setup() {
        seen.main = injectAgentChat();
        seen.side = injectAgentChat(sideKey);
        return () => h("span");
      }
    });
    const Page = defineComponent({
      setup() {
        provideAgentChat({ agent: main, initialMessages: [] });
        const opened = useAgentChat<unknown, Note>({ agent: side, initialMessages: [] });
        seen.opened = opened as unknown as UseAgentChatReturn;
        seen.provided = provideAgentChat(opened, sideKey);
        return () => h(Child);
      }
    });
    const { unmount } = mount(Page);
    expect(seen.provided).toBe(seen.opened);
    expect(seen.side).toBe(seen.opened);
    expect(seen.main).not.toBe(seen.opened);
    unmount();
    expect(main.listenerCount).toBe(0);
    expect(side.listenerCount).toBe(0);
  });

  it("injecting with nothing provided throws a clear error that says what to do", () => {
    const Orphan = defineComponent({
      setup() {
        injectAgentChat();
        return () => h("span");
      }
    });
    const orphan = mount(Orphan);
    expect(orphan.errors).toHaveLength(1);
    expect(String(orphan.errors[0])).toMatch(/injectAgentChat\(\) found no chat for Symbol\(agents-vue:chat\): call provideAgentChat\(\) in a parent component's setup\(\)/);
    orphan.unmount();
    const key: InjectionKey<UseAgentChatReturn> = Symbol("support chat");
    const WrongKey = defineComponent({
      setup() {
        provideAgentChat({ agent: new FakeSocket(), initialMessages: [] });
        return () => h(defineComponent({ setup: () => (injectAgentChat(key), () => h("span")) }));
      }
    });
    const wrongKey = mount(WrongKey);
    expect(String(wrongKey.errors[0])).toMatch(/found no chat for Symbol\(support chat\)/);
    wrongKey.unmount();
  });

  it("outside setup() injecting throws the same clear error", () => {
    expect(() => injectAgentChat()).toThrow(/injectAgentChat\(\) found no chat for Symbol\(agents-vue:chat\)/);
  });
});
