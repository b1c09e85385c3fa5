/**
 * Vue Devtools' own backend (`@vue/devtools-kit`, what the Devtools 7
 * browser extension and `vite-plugin-vue-devtools` run in the page) takes the
 * chat's plugin: its inspector tree and state, and its timeline events, as
 * Devtools reads them.
 */
import { DevToolsMessagingHookKeys, devtools, devtoolsContext, toggleHighPerfMode, updateTimelineLayersState } from "@vue/devtools-kit";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, defineComponent, h } from "vue";
import { useAgentChat } from "../../src";
import { createTestAgent } from "../../src/testing";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("Vue Devtools' backend (devtools-kit)", () => {
  it("shows the chat in the inspector and its turn on the timeline", async () => {
    devtools.init();
    // What the Devtools client does when it connects.
    toggleHighPerfMode(false);
    const timeline: Array<{ layerId: string; title: string }> = [];
    devtoolsContext.hooks.hook(DevToolsMessagingHookKeys.SEND_TIMELINE_EVENT_TO_CLIENT, (options) => {
      timeline.push({ layerId: options.layerId, title: String(options.event.title) });
    });
    const agent = createTestAgent({ name: "kit", replies: ["Hello from the agent"] });
    let chat!: ReturnType<typeof useAgentChat>;
    const Chat = defineComponent({
      setup() {
        chat = useAgentChat({ agent: agent.socket, throttle: false });
        return () => h("p", chat.messages.value.length);
      }
    });
    const host = document.body.appendChild(document.createElement("div"));
    const app = createApp(Chat);
    app.mount(host);
    cleanups.push(() => app.unmount(), () => host.remove(), () => agent.dispose());
    await agent.settled();
    let tree: Array<{ id: string; label: string }> = [];
    await vi.waitFor(async () => {
      tree = (await devtools.api.getInspectorTree({ inspectorId: "agents-vue", filter: "" })) as typeof tree;
      expect(tree.map((node) => node.label)).toEqual(["chat-agent/kit"]);
    });
    // Once the plugin registered, the user turns on recording of its timeline layers.
    updateTimelineLayersState({ "agents-vue": true });
    await chat.sendMessage({ text: "hello" });
    await agent.settled();

    const state = (await devtools.api.getInspectorState({ inspectorId: "agents-vue", nodeId: tree[0]!.id })) as unknown as Record<string, Array<{ key: string; value: unknown }>>;
    expect(state["status and flags"]!.find((entry) => entry.key === "status")!.value).toBe("ready");
    expect(state.transcript!.find((entry) => entry.key === "count")!.value).toBe(2);
    await vi.waitFor(() => expect(timeline.map((event) => event.title)).toContain("Turn ended"));
    expect(timeline.map((event) => `${event.layerId} ${event.title}`)).toContain("agents-vue:frames ⇡ cf_agent_use_chat_request");
  });
});
