/**
 * Vue Devtools support: each chat in a custom inspector and on the timeline,
 * in development builds with Devtools on the page; nothing loaded without
 * Devtools, nothing of it in a production bundle. Devtools itself (the
 * browser extension) is outside the process: a recording hook stands in for
 * it, speaking the plugin protocol (`devtools-plugin:setup`).
 */
import { resolve } from "node:path";
import { build as esbuild } from "esbuild";
import { build as viteBuild, type Rolldown } from "vite";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type App, defineComponent, getCurrentInstance, h, ref } from "vue";
import { useAgentChat } from "../../src";
import { ChatProbe, type DevtoolsHook } from "../../src/core/devtools-probe";
import { createTestAgent } from "../../src/testing";
import { installDevtoolsHook as installHook } from "../support/devtools-hook";
import { mountInNode } from "../support/node-renderer";

const loads = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/devtools/chat-inspector", async (importOriginal) => {
  const inspector = await importOriginal();
  loads.count++;
  return inspector;
});

/** The hook the test put on the page. */
const devtoolsHookOnPage = () => (globalThis as unknown as { __VUE_DEVTOOLS_GLOBAL_HOOK__: DevtoolsHook }).__VUE_DEVTOOLS_GLOBAL_HOOK__;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.unstubAllGlobals();
});

function mountChat(agent: ReturnType<typeof createTestAgent>) {
  let chat!: ReturnType<typeof useAgentChat>;
  let app!: App;
  const Chat = defineComponent({
    setup() {
      app = getCurrentInstance()!.appContext.app;
      chat = useAgentChat({ agent: agent.socket, throttle: false });
      return () => h("p", chat.messages.value.length);
    }
  });
  const { unmount } = mountInNode(Chat);
  cleanups.push(unmount, () => agent.dispose());
  return { chat, unmount, app };
}

describe("Vue Devtools", () => {
  it("loads nothing when Devtools is absent", async () => {
    const agent = createTestAgent({ replies: ["Hi"] });
    const send = agent.socket.send;
    const { chat } = mountChat(agent);
    await agent.settled();
    await chat.sendMessage({ text: "hello" });
    await agent.settled();
    expect(chat.messages.value).toHaveLength(2);
    expect(loads.count).toBe(0);
    // Nothing wrapped or listened to on the socket for Devtools either.
    expect(agent.socket.send).toBe(send);
  });

  it("shows each chat in an inspector and its frames, turns, reads and reconnects on the timeline", async () => {
    const devtools = installHook();
    const agent = createTestAgent({ name: "inspected", pace: "manual", replies: ["Hello there", "Again"] });
    const { chat, unmount } = mountChat(agent);
    // The inspector loads (a dynamic import) and registers with Devtools.
    await vi.waitFor(() => expect(devtools.inspectors).toEqual(["agents-vue"]));
    expect(loads.count).toBe(1);
    await agent.settled();
    expect(devtools.descriptor).toMatchObject({ id: "agents-vue", packageName: "agents-vue" });
    expect(devtools.layers).toEqual(["agents-vue:frames", "agents-vue:chat"]);

    void chat.sendMessage({ text: "hello" });
    await agent.advance(3);
    // Mid-stream: the inspector shows the running stream and the partial transcript.
    const [node] = devtools.tree();
    expect(node).toMatchObject({ label: "chat-agent/inspected" });
    expect(node!.tags!.map((tag) => tag.label)).toEqual(["streaming", "open"]);
    const live = devtools.state(node!.id);
    const entry = (section: string, key: string) => live[section]!.find((candidate) => candidate.key === key)?.value;
    expect(entry("address", "url")).toBe("http://agents.test/agents/chat-agent/inspected");
    expect(entry("connection", "connectionStatus")).toBe("open");
    expect(entry("status and flags", "status")).toBe("streaming");
    expect(Object.keys(entry("streams and tool calls", "running streams") as object)).toHaveLength(1);
    expect(entry("transcript", "count")).toBe(2);
    expect(entry("queued sends", "queuedMessages")).toEqual([]);
    await agent.advance("turn");

    agent.drop();
    await agent.reconnect();
    await agent.settled();

    const titles = devtools.events.map((event) => `${event.layerId} ${event.title}`);
    expect(titles).toContain("agents-vue:chat Connected");
    expect(titles).toContain("agents-vue:chat Transcript read started");
    expect(titles).toContain("agents-vue:chat Transcript read answered");
    expect(titles).toContain("agents-vue:frames ⇡ cf_agent_use_chat_request");
    expect(titles).toContain("agents-vue:frames ⇣ cf_agent_use_chat_response");
    expect(titles).toContain("agents-vue:chat Turn started");
    expect(titles).toContain("agents-vue:chat Turn ended");
    expect(titles).toContain("agents-vue:chat Disconnected (1006)");
    expect(titles.filter((title) => title === "agents-vue:chat Connected")).toHaveLength(2);
    const ended = devtools.events.find((event) => event.title === "Turn ended")!;
    expect(ended.data).toMatchObject({ outcome: "completed", agent: "chat-agent/inspected" });
    const settled = devtools.state(node!.id);
    expect(settled["status and flags"]!.find((candidate) => candidate.key === "status")!.value).toBe("ready");
    expect(settled["streams and tool calls"]!.find((candidate) => candidate.key === "running streams")!.value).toEqual({});

    // An unmounted chat leaves the inspector.
    unmount();
    expect(devtools.tree()).toEqual([]);
  });

  it("shows a useAgent connection on the same socket without the chat's frames a second time", async () => {
    const devtools = installHook();
    const agent = createTestAgent({ name: "shared", replies: ["Hi"] });
    const { chat, app } = mountChat(agent);
    // What useAgent does for its connection, in the same app, on the test agent's socket (useAgent itself opens a real WebSocket).
    const probe = new ChatProbe(app, devtoolsHookOnPage());
    probe.follow(agent.socket);
    const { inspectConnection } = await import("../../src/devtools/chat-inspector");
    inspectConnection(probe, {
      label: () => "ChatAgent/shared",
      address: () => agent.url,
      cells: { status: ref("open"), connectionError: ref(null), identity: ref({ agent: "chat-agent", name: "shared" }), state: ref({ count: 1 }), mcpServers: ref(undefined) }
    });
    cleanups.push(() => probe.dispose());
    await vi.waitFor(() => expect(devtools.tree()).toHaveLength(2));
    await agent.settled();
    await chat.sendMessage({ text: "hello" });
    await agent.settled();
    // A frame of another protocol on the socket (state sync) is the connection's to show.
    agent.socket.send(JSON.stringify({ type: "cf_agent_state", state: { count: 2 } }));

    const framesOf = (label: string) => devtools.events.filter((event) => event.layerId === "agents-vue:frames" && event.data.agent === label).map((event) => event.title);
    expect(framesOf("chat-agent/shared")).toContain("⇡ cf_agent_use_chat_request");
    expect(framesOf("ChatAgent/shared (useAgent)")).toEqual(["⇡ cf_agent_state"]);
    const node = devtools.tree().find((candidate) => candidate.label === "ChatAgent/shared (useAgent)")!;
    expect(node.tags!.map((tag) => tag.label)).toEqual(["open"]);
    expect(devtools.state(node.id).state).toEqual([{ key: "state", value: { count: 1 } }]);
  });
});

/** `import { useAgent, useAgentChat } from "agents-vue"` bundled for an app, peers left as imports. */
const consumer = `import { useAgent, useAgentChat } from ${JSON.stringify(resolve(import.meta.dirname, "../../src/index.ts"))};\nexport { useAgent, useAgentChat };`;
const devtoolsCode = ["devtools-plugin:setup", "__VUE_DEVTOOLS_GLOBAL_HOOK__", "Agent chats", "Transcript read"];

async function esbuildBundle(nodeEnv: string): Promise<string> {
  const result = await esbuild({
    stdin: { contents: consumer, resolveDir: resolve(import.meta.dirname, "../.."), loader: "ts" },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    define: { "process.env.NODE_ENV": JSON.stringify(nodeEnv) },
    plugins: [{ name: "peers-external", setup: (plugin) => void plugin.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true })) }]
  });
  return result.outputFiles.map((file) => file.text).join("\n");
}

async function viteBundle(nodeEnv: "production" | "development"): Promise<{ code: string; chunks: string[] }> {
  const result = (await viteBuild({
    configFile: false,
    logLevel: "silent",
    mode: nodeEnv,
    root: resolve(import.meta.dirname, "../.."),
    define: { "process.env.NODE_ENV": JSON.stringify(nodeEnv) },
    plugins: [{ name: "consumer", resolveId: (id) => (id === "consumer-entry" ? "\0consumer-entry" : null), load: (id) => (id === "\0consumer-entry" ? consumer : null) }],
    build: {
      write: false,
      minify: true,
      rollupOptions: { input: "consumer-entry", preserveEntrySignatures: "strict", external: (id) => /^(vue|ai|agents|@ai-sdk|nanoid|partysocket)($|\/)/.test(id) }
    }
  })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
  const files = (Array.isArray(result) ? result : [result]).flatMap((output) => output.output).filter((file) => file.type === "chunk");
  return { code: files.map((file) => file.code).join("\n"), chunks: files.map((file) => file.fileName) };
}

describe("Vue Devtools in a production build", () => {
  it("esbuild: an app that imports useAgentChat and useAgent carries no Devtools code (a development build does)", async () => {
    const production = await esbuildBundle("production");
    for (const text of devtoolsCode) expect(production).not.toContain(text);
    const development = await esbuildBundle("development");
    for (const text of devtoolsCode) expect(development).toContain(text);
  }, 60_000);

  it("Vite: the production build has no Devtools chunk and no Devtools code (a development build splits it off)", async () => {
    const production = await viteBundle("production");
    for (const text of devtoolsCode) expect(production.code).not.toContain(text);
    expect(production.chunks).toHaveLength(1);
    const development = await viteBundle("development");
    expect(development.chunks.some((name) => name.includes("chat-inspector"))).toBe(true);
  }, 60_000);
});
