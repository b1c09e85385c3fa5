// B: upstream React (`useAgentChat` from agents/chat/react over `useAgent`,
// React 19, default options). No JSX transform: React.createElement.
import { countRender, register } from "../harness";
import { Suspense, createElement as h, memo } from "react";
import { createRoot } from "react-dom/client";
import { useAgent } from "agents/react";
import { useAgentChat } from "agents/chat/react";
import type { UIMessage } from "ai";
import type { MountConfig } from "../harness";
import { AGENT, textOf } from "../text";

let sender: ((text: string) => void) | null = null;

/** One message; `memo` skips it while its message object is unchanged (the Vue page's child component). */
const Message = memo(function Message({ message }: { message: UIMessage }) {
  countRender();
  return h("div", { className: "msg", "data-role": message.role }, textOf(message));
});

function Chat({ config }: { config: MountConfig }) {
  const agent = useAgent({
    agent: AGENT,
    host: config.host,
    name: config.name,
    ...(config.fastReconnect ? { minReconnectionDelay: 0 } : {})
  });
  const { messages, sendMessage } = useAgentChat({ agent });
  sender = (text) => void sendMessage({ text });
  return h(
    "div",
    { id: "chat" },
    messages.map((message) => h(Message, { key: message.id, message }))
  );
}

const root = createRoot(document.getElementById("app")!);
let mounts = 0;

register({
  name: "B",
  mount(config) {
    mounts++;
    root.render(h(Suspense, { fallback: null }, h(Chat, { key: mounts, config })));
  },
  unmount() {
    sender = null;
    root.render(null);
  },
  send(text) {
    sender?.(text);
  }
});
