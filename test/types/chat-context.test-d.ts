import type { ChatStatus, UIMessage } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import type { ComputedRef, InjectionKey } from "vue";
import { agentChatKey, injectAgentChat, provideAgentChat, useAgentChat, type UseAgentChatReturn } from "../../src";

type MyMessage = UIMessage<{ createdAt: number }>;

describe("provideAgentChat / injectAgentChat", () => {
  it("provide from options keeps the message type and stays awaitable", () => {
    const initial: MyMessage[] = [];
    const provided = provideAgentChat({ client: { agent: "ChatAgent" }, initialMessages: initial });
    expectTypeOf(provided.messages.value).toEqualTypeOf<MyMessage[]>();
    expectTypeOf(provided).toExtend<PromiseLike<UseAgentChatReturn<MyMessage>>>();
  });

  it("provide an open chat returns it as it is", () => {
    const chat = useAgentChat<unknown, MyMessage>({ client: { agent: "ChatAgent" } });
    expectTypeOf(provideAgentChat(chat)).toEqualTypeOf<UseAgentChatReturn<MyMessage>>();
  });

  it("inject is typed by its type argument or by a typed key", () => {
    expectTypeOf(injectAgentChat().messages.value).toEqualTypeOf<UIMessage[]>();
    expectTypeOf(injectAgentChat<MyMessage>().messages.value).toEqualTypeOf<MyMessage[]>();
    const key: InjectionKey<UseAgentChatReturn<MyMessage>> = Symbol("mine");
    expectTypeOf(injectAgentChat(key).chat.messages).toEqualTypeOf<MyMessage[]>();
    expectTypeOf(agentChatKey).toEqualTypeOf<InjectionKey<UseAgentChatReturn<UIMessage>>>();
  });

  it("displayStatus is a chat status", () => {
    expectTypeOf(injectAgentChat().displayStatus).toEqualTypeOf<ComputedRef<ChatStatus>>();
  });
});
