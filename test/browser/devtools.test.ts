/**
 * Vue Devtools in the browser: a `useAgent` connection and a chat sharing it
 * appear as two nodes of the inspector, each with its own sections. No
 * server answers: the connection keeps trying, which is what it shows.
 * Devtools itself is outside the page's code: a recording hook stands in.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, defineComponent, h } from "vue";
import { useAgent, useAgentChat } from "../../src";
import { installDevtoolsHook } from "../support/devtools-hook";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.unstubAllGlobals();
});

describe("Vue Devtools in the browser", () => {
  it("shows a useAgent connection and the chat on it, each with its own state", async () => {
    const devtools = installDevtoolsHook();
    const Chat = defineComponent({
      setup() {
        // Port 9 (discard): nothing answers, so the connection stays "connecting".
        const agent = useAgent({ agent: "SupportAgent", name: "room-1", host: "127.0.0.1:9" });
        const chat = useAgentChat({ agent, getInitialMessages: null });
        return () => h("p", chat.status.value);
      }
    });
    const host = document.body.appendChild(document.createElement("div"));
    const app = createApp(Chat);
    app.mount(host);
    cleanups.push(() => app.unmount(), () => host.remove());

    await vi.waitFor(() => expect(devtools.tree()).toHaveLength(2));
    const nodes = devtools.tree();
    const connection = nodes.find((node) => node.label.endsWith("(useAgent)"))!;
    const chat = nodes.find((node) => !node.label.endsWith("(useAgent)"))!;
    expect(connection.label).toBe("SupportAgent/room-1 (useAgent)");
    expect(connection.tags!.map((tag) => tag.label)).toEqual(["connecting"]);
    const connectionState = devtools.state(connection.id);
    expect(connectionState.address!.find((entry) => entry.key === "url")!.value).toBe("http://127.0.0.1:9/agents/support-agent/room-1");
    expect(Object.keys(connectionState)).toEqual(["address", "connection", "state", "MCP servers"]);
    expect(Object.keys(devtools.state(chat.id))).toEqual(["address", "connection", "status and flags", "transcript", "queued sends", "streams and tool calls"]);

    app.unmount();
    cleanups.length = 0;
    host.remove();
    expect(devtools.tree()).toEqual([]);
  });
});
