import type { UIMessage } from "ai";
import { type InjectionKey, hasInjectionContext, inject, provide } from "vue";
import { type UseAgentChatOptions, type UseAgentChatReturn, useAgentChat } from "./use-agent-chat";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/**
 * The key {@link provideAgentChat} and {@link injectAgentChat} use when given
 * none. For a second chat on one page, or to carry the message type in the key,
 * make your own: `const key: InjectionKey<UseAgentChatReturn<MyMessage>> = Symbol("support")`.
 */
export const agentChatKey: InjectionKey<UseAgentChatReturn<UIMessage>> = Symbol("agents-vue:chat");

/**
 * Opens a chat (`useAgentChat(options)`) and provides it to this component's
 * descendants, or provides a chat you already hold. A sidebar, a message list
 * and a composer in different components then share one socket and one
 * transcript through {@link injectAgentChat}. Call it in `setup()`.
 */
export function provideAgentChat<M extends UIMessage = UIMessage>(
  options: UseAgentChatOptions<M>,
  key?: InjectionKey<UseAgentChatReturn<M>>
): UseAgentChatReturn<M> & PromiseLike<UseAgentChatReturn<M>>;
export function provideAgentChat<M extends UIMessage = UIMessage>(
  chat: UseAgentChatReturn<M>,
  key?: InjectionKey<UseAgentChatReturn<M>>
): UseAgentChatReturn<M>;
export function provideAgentChat<M extends UIMessage = UIMessage>(
  source: UseAgentChatOptions<M> | UseAgentChatReturn<M>,
  key: InjectionKey<UseAgentChatReturn<M>> = agentChatKey as InjectionKey<UseAgentChatReturn<M>>
): UseAgentChatReturn<M> {
  // Options never have `chat`; a return value always does.
  const chat = "chat" in source ? source : useAgentChat<unknown, M>(source);
  provide(key, chat);
  return chat;
}

/**
 * The chat an ancestor provided with {@link provideAgentChat}. Throws a clear
 * error when none was provided (or when called outside `setup()`), so a
 * component used outside its chat fails at once instead of rendering nothing.
 * Pass the message type (`injectAgentChat<MyMessage>()`) or a typed key.
 */
export function injectAgentChat<M extends UIMessage = UIMessage>(
  key: InjectionKey<UseAgentChatReturn<M>> = agentChatKey as InjectionKey<UseAgentChatReturn<M>>
): UseAgentChatReturn<M> {
  const chat = hasInjectionContext() ? inject(key, null) : null;
  if (!chat) {
    throw new Error(
      process.env.NODE_ENV !== "production"
        ? `[agents-vue] injectAgentChat() found no chat for ${String(key)}: call provideAgentChat() in a parent component's setup().`
        : `[agents-vue] injectAgentChat() found no chat for ${String(key)}.`
    );
  }
  return chat;
}
