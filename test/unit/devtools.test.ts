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
import { defineComponent, h } from "vue";
import { useAgentChat } from "../../src";
import { createTestAgent } from "../../src/testing";
import { mountInNode } from "../support/node-renderer";

const loads = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/devtools/chat-inspector", async (importOriginal) => {
  const inspector = await importOriginal();
  loads.count++;
  return inspector;
});

interface Recorded {
  descriptor: Record<string, unknown>;
  inspectors: string[];
  layers: string[];
  events: Array<{ layerId: string; title: string; subtitle?: string; data: Record<string, unknown> }>;
  tree(): Array<{ id: string; label: string; tags?: Array<{ label: string }> }>;
  state(nodeId: string): Record<string, Array<{ key: string; value: unknown }>>;
  sends: number;
}

/** A Devtools hook that runs the plugin's setup at once and records what it is sent. */
function installHook(): Recorded {
  const treeHandlers: Array<(payload: { inspectorId: string; filter: string; rootNodes: unknown[] }) => void> = [];
  const stateHandlers: Array<(payload: { inspectorId: string; nodeId: string; state: unknown }) => void> = [];
  const recorded: Recorded = {
    descriptor: {},
    inspectors: [],
    layers: [],
    events: [],
    sends: 0,
    tree() {
      const payload = { inspectorId: "agents-vue", filter: "", rootNodes: [] as unknown[] };
      for (const handler of treeHandlers) handler(payload);
      return payload.rootNodes as ReturnType<Recorded["tree"]>;
    },
    state(nodeId) {
      const payload = { inspectorId: "agents-vue", nodeId, state: {} as unknown };
      for (const handler of stateHandlers) handler(payload);
      return payload.state as ReturnType<Recorded["state"]>;
    }
  };
  const api = {
    addInspector: (options: { id: string }) => void recorded.inspectors.push(options.id),
    addTimelineLayer: (options: { id: string }) => void recorded.layers.push(options.id),
    addTimelineEvent: (options: { layerId: string; event: { title: string; subtitle?: string; data: Record<string, unknown> } }) =>
      void recorded.events.push({ layerId: options.layerId, ...options.event }),
    sendInspectorTree: () => void recorded.sends++,
    sendInspectorState: () => void recorded.sends++,
    now: () => Date.now(),
    on: {
      getInspectorTree: (handler: (typeof treeHandlers)[number]) => void treeHandlers.push(handler),
      getInspectorState: (handler: (typeof stateHandlers)[number]) => void stateHandlers.push(handler)
    }
  };
  vi.stubGlobal("__VUE_DEVTOOLS_GLOBAL_HOOK__", {
    emit(event: string, descriptor: Record<string, unknown>, setup: (plugin: typeof api) => void) {
      if (event !== "devtools-plugin:setup") return;
      recorded.descriptor = descriptor;
      setup(api);
    }
  });
  return recorded;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.unstubAllGlobals();
});

function mountChat(agent: ReturnType<typeof createTestAgent>) {
  let chat!: ReturnType<typeof useAgentChat>;
  const Chat = defineComponent({
    setup() {
      chat = useAgentChat({ agent: agent.socket, throttle: false });
      return () => h("p", chat.messages.value.length);
    }
  });
  const { unmount } = mountInNode(Chat);
  cleanups.push(unmount, () => agent.dispose());
  return { chat, unmount };
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
});

/** `import { useAgentChat } from "agents-vue"` bundled for an app, peers left as imports. */
const consumer = `import { useAgentChat } from ${JSON.stringify(resolve(import.meta.dirname, "../../src/index.ts"))};\nexport { useAgentChat };`;
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
  it("esbuild: an app that imports useAgentChat carries no Devtools code (a development build does)", async () => {
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
