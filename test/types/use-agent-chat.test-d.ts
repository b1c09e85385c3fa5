import type { ChatStatus, UIMessage } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import type { ShallowRef } from "vue";
import { type AgentChat, type UseAgentChatReturn, useAgentChat } from "../../src";

type Metadata = { createdAt: number };
type DataParts = { progress: { percent: number } };
type MyMessage = UIMessage<Metadata, DataParts>;

class MyAgent {
  greet(name: string): string {
    return `hi ${name}`;
  }
}

describe("useAgentChat<AgentT, ChatMessage, State>", () => {
  it("narrows chat.messages and the flat refs to the custom message type", () => {
    const result = useAgentChat<MyAgent, MyMessage, { count: number }>({
      client: { agent: "MyAgent", name: "s1" }
    });
    expectTypeOf(result.chat.messages).toEqualTypeOf<MyMessage[]>();
    expectTypeOf(result.messages.value).toEqualTypeOf<MyMessage[]>();
    expectTypeOf(result.chat).toEqualTypeOf<AgentChat<MyMessage>>();
    expectTypeOf(result.chat.lastMessage).toEqualTypeOf<MyMessage | undefined>();
    expectTypeOf(result.status).toEqualTypeOf<Readonly<ShallowRef<ChatStatus>>>();
    expectTypeOf(result.messages.value[0]!.metadata).toEqualTypeOf<Metadata | undefined>();
  });

  it("types the AI SDK's queue accessors (experimental_queue) with the custom message type", () => {
    const result = useAgentChat<unknown, MyMessage>({ client: { agent: "MyAgent" }, experimental_queue: true });
    expectTypeOf(result.experimental_queuedMessages).toEqualTypeOf<Readonly<ShallowRef<MyMessage[]>>>();
    expectTypeOf(result.experimental_removeQueuedMessage).toEqualTypeOf<(id: string) => void>();
    expectTypeOf(result.experimental_sendQueuedMessageNow).toEqualTypeOf<(id: string) => Promise<void>>();
  });

  it("infers the message type from initialMessages", () => {
    const initial: MyMessage[] = [];
    const result = useAgentChat({ client: { agent: "MyAgent" }, initialMessages: initial });
    expectTypeOf(result.chat.messages).toEqualTypeOf<MyMessage[]>();
  });

  it("types callbacks with the custom message type", () => {
    useAgentChat<unknown, MyMessage>({
      client: { agent: "MyAgent" },
      mergeMessages: (onScreen, stored) => {
        expectTypeOf(onScreen).toEqualTypeOf<MyMessage[]>();
        return [...stored, ...onScreen];
      },
      onFinish: ({ message }) => {
        expectTypeOf(message).toEqualTypeOf<MyMessage>();
      }
    });
  });

  it("is awaitable and resolves to the same return shape", async () => {
    const awaited = await useAgentChat<unknown, MyMessage>({ client: { agent: "MyAgent" } });
    expectTypeOf(awaited).toEqualTypeOf<UseAgentChatReturn<MyMessage>>();
  });

  it("rejects a mergeMessages that returns something else", () => {
    type Merge = NonNullable<Parameters<typeof useAgentChat<unknown, MyMessage>>[0]["mergeMessages"]>;
    expectTypeOf<ReturnType<Merge>>().toEqualTypeOf<MyMessage[]>();
    useAgentChat<unknown, MyMessage>({
      client: { agent: "MyAgent" },
      // @ts-expect-error: mergeMessages must return messages
      mergeMessages: () => "nope"
    });
  });
});
