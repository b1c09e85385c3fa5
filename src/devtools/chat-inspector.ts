import { CHAT_MESSAGE_TYPES } from "agents/chat";
import { type App, type Ref, effectScope, watch } from "vue";
import type { ConnectionStatus } from "../core/connection";
import type { ChatProbe, ProbeEvent } from "../core/devtools-probe";

/**
 * The chats and agent connections of an app in Vue Devtools: a custom
 * inspector (one node per chat: its address, connection, status and flags,
 * transcript, queued sends, running streams and tool calls; one per
 * `useAgent` connection: its address, status, identity, state and MCP
 * servers) and two timeline layers (frames in and out; turns, reads and the
 * connection). Development builds only, loaded with `import()` by
 * `useAgentChat` and `useAgent` once the Devtools hook is on the page.
 *
 * It speaks the Devtools plugin protocol on the global hook (the
 * `devtools-plugin:setup` event `setupDevtoolsPlugin` of `@vue/devtools-api`
 * emits, which Devtools 6 and 7 take), so the package needs no dependency.
 */

const INSPECTOR = "agents-vue";
/** The chat protocol's frame types (`CHAT_MESSAGE_TYPES` of `agents/chat`). */
const CHAT_FRAME_TYPES: ReadonlySet<string> = new Set(Object.values(CHAT_MESSAGE_TYPES));
const FRAMES = "agents-vue:frames";
const CHAT = "agents-vue:chat";

interface Tag {
  label: string;
  textColor: number;
  backgroundColor: number;
}
interface StateEntry {
  key: string;
  value: unknown;
}
interface TimelineEvent {
  time: number;
  title: string;
  subtitle?: string;
  data: Record<string, unknown>;
  groupId?: string;
  logType?: "default" | "warning" | "error";
}

/** The part of the Devtools plugin API this inspector uses. */
export interface DevtoolsPluginApi {
  addInspector(options: { id: string; label: string; icon?: string; treeFilterPlaceholder?: string; noSelectionText?: string }): void;
  sendInspectorTree(inspectorId: string): void;
  sendInspectorState(inspectorId: string): void;
  addTimelineLayer(options: { id: string; label: string; color: number }): void;
  addTimelineEvent(options: { layerId: string; event: TimelineEvent }): void;
  now(): number;
  on: {
    getInspectorTree(handler: (payload: { inspectorId: string; filter: string; rootNodes: Array<{ id: string; label: string; tags?: Tag[] }> }) => void): void;
    getInspectorState(handler: (payload: { inspectorId: string; nodeId: string; state: Record<string, StateEntry[]> }) => void): void;
  };
}

/** What the inspector reads of a chat: `useAgentChat`'s cells and where it points. */
export interface InspectedChat {
  label(): string;
  address(): string | null;
  chatId(): string;
  cells: {
    messages: Readonly<Ref<readonly unknown[]>>;
    status: Readonly<Ref<string>>;
    error: Readonly<Ref<Error | undefined>>;
    serverStreaming: Readonly<Ref<boolean>>;
    recovering: Readonly<Ref<boolean>>;
    toolContinuation: Readonly<Ref<boolean>>;
    connectionError: Readonly<Ref<Error | null>>;
    connection: Readonly<Ref<ConnectionStatus>>;
    loading: Readonly<Ref<boolean>>;
    runningToolCalls: Readonly<Ref<ReadonlySet<string>>>;
    queued: Readonly<Ref<readonly unknown[]>>;
  };
}

/** What the inspector reads of a `useAgent` connection. */
export interface InspectedConnection {
  label(): string;
  address(): string | null;
  cells: {
    status: Readonly<Ref<ConnectionStatus>>;
    connectionError: Readonly<Ref<Error | null>>;
    identity: Readonly<Ref<{ agent: string; name: string } | null>>;
    state: Readonly<Ref<unknown>>;
    mcpServers: Readonly<Ref<unknown>>;
  };
}

/** One node of the inspector. */
interface Tracked {
  label(): string;
  tags(): Tag[];
  state(): Record<string, StateEntry[]>;
  /** Reads every cell the node shows (its changes refresh the inspector). */
  cells: Record<string, Readonly<Ref<unknown>>>;
  /** A chat's node: its requests and the streams it saw that have not ended (id → what it is). A connection's is null: the chat on it reports the chat frames. */
  turns: Map<string, string> | null;
}

interface AppPlugin {
  api: DevtoolsPluginApi | null;
  nodes: Map<string, Tracked>;
  /** Timeline events from before Devtools called the setup function. */
  waiting: Array<{ layerId: string; event: TimelineEvent; at: number }>;
}

const plugins = new Map<App, AppPlugin>();
let nodeCount = 0;

const green = { textColor: 0xffffff, backgroundColor: 0x42b883 };
const amber = { textColor: 0x000000, backgroundColor: 0xf5b942 };
const red = { textColor: 0xffffff, backgroundColor: 0xd94848 };

const colorOf = (value: string, good: string, bad: string) => (value === bad ? red : value === good ? green : amber);

function chatNode(chat: InspectedChat): Tracked {
  const c = chat.cells;
  const turns = new Map<string, string>();
  return {
    label: chat.label,
    turns,
    cells: c,
    tags: () => [
      { label: c.status.value, ...colorOf(c.status.value, "ready", "error") },
      { label: c.connection.value, ...colorOf(c.connection.value, "open", "closed") }
    ],
    state: () => ({
      address: [
        { key: "agent", value: chat.label() },
        { key: "url", value: chat.address() },
        { key: "chat id", value: chat.chatId() }
      ],
      connection: [
        { key: "connectionStatus", value: c.connection.value },
        { key: "connectionError", value: c.connectionError.value?.message ?? null }
      ],
      "status and flags": [
        { key: "status", value: c.status.value },
        { key: "error", value: c.error.value?.message ?? null },
        { key: "isServerStreaming", value: c.serverStreaming.value },
        { key: "isRecovering", value: c.recovering.value },
        { key: "isToolContinuation", value: c.toolContinuation.value },
        { key: "isLoading", value: c.loading.value }
      ],
      transcript: [
        { key: "count", value: c.messages.value.length },
        { key: "messages", value: c.messages.value }
      ],
      "queued sends": [{ key: "queuedMessages", value: c.queued.value }],
      "streams and tool calls": [
        { key: "running streams", value: Object.fromEntries(turns) },
        { key: "running tool calls", value: [...c.runningToolCalls.value] }
      ]
    })
  };
}

function connectionNode(connection: InspectedConnection): Tracked {
  const c = connection.cells;
  return {
    label: () => `${connection.label()} (useAgent)`,
    turns: null,
    cells: c,
    tags: () => [{ label: c.status.value, ...colorOf(c.status.value, "open", "closed") }],
    state: () => ({
      address: [
        { key: "agent", value: connection.label() },
        { key: "url", value: connection.address() }
      ],
      connection: [
        { key: "status", value: c.status.value },
        { key: "connectionError", value: c.connectionError.value?.message ?? null },
        { key: "identity", value: c.identity.value }
      ],
      state: [{ key: "state", value: c.state.value }],
      "MCP servers": [{ key: "mcpServers", value: c.mcpServers.value }]
    })
  };
}

function pluginOf(probe: ChatProbe): AppPlugin {
  const existing = plugins.get(probe.app);
  if (existing) return existing;
  const plugin: AppPlugin = { api: null, nodes: new Map(), waiting: [] };
  plugins.set(probe.app, plugin);
  const descriptor = { id: "agents-vue", label: "agents-vue", packageName: "agents-vue", homepage: "https://www.npmjs.com/package/agents-vue", app: probe.app, componentStateTypes: [] };
  probe.hook.emit("devtools-plugin:setup", descriptor, (api: DevtoolsPluginApi) => {
    plugin.api = api;
    api.addInspector({ id: INSPECTOR, label: "Agent chats", icon: "forum", treeFilterPlaceholder: "Filter chats", noSelectionText: "Select a chat" });
    api.addTimelineLayer({ id: FRAMES, label: "Agent frames", color: 0x42b883 });
    api.addTimelineLayer({ id: CHAT, label: "Agent chats", color: 0xf38020 });
    api.on.getInspectorTree((payload) => {
      if (payload.inspectorId !== INSPECTOR) return;
      const filter = payload.filter.toLowerCase();
      payload.rootNodes = [...plugin.nodes]
        .filter(([, tracked]) => !filter || tracked.label().toLowerCase().includes(filter))
        .map(([id, tracked]) => ({ id, label: tracked.label(), tags: tracked.tags() }));
    });
    api.on.getInspectorState((payload) => {
      if (payload.inspectorId !== INSPECTOR) return;
      const tracked = plugin.nodes.get(payload.nodeId);
      if (tracked) payload.state = tracked.state();
    });
    const now = api.now();
    const wallNow = Date.now();
    for (const { layerId, event, at } of plugin.waiting.splice(0)) api.addTimelineEvent({ layerId, event: { ...event, time: now - (wallNow - at) } });
    api.sendInspectorTree(INSPECTOR);
  });
  return plugin;
}

function emit(plugin: AppPlugin, layerId: string, event: Omit<TimelineEvent, "time">, at: number): void {
  const api = plugin.api;
  if (api) api.addTimelineEvent({ layerId, event: { ...event, time: api.now() - (Date.now() - at) } });
  else {
    plugin.waiting.push({ layerId, event: { ...event, time: 0 }, at });
    if (plugin.waiting.length > 500) plugin.waiting.shift();
  }
}

/** A frame as the socket carried it: its JSON object, or the text when it is not one. */
function parse(data: unknown): Record<string, unknown> | string {
  if (typeof data !== "string") return String(data);
  try {
    const frame = JSON.parse(data) as unknown;
    return frame && typeof frame === "object" ? (frame as Record<string, unknown>) : data;
  } catch {
    return data;
  }
}

/** The chunk type a response frame carries, for the timeline's subtitle. */
function chunkType(frame: Record<string, unknown>): string | undefined {
  if (typeof frame.body !== "string" || frame.body === "") return undefined;
  try {
    const chunk = JSON.parse(frame.body) as { type?: unknown };
    return typeof chunk.type === "string" ? chunk.type : undefined;
  } catch {
    return undefined;
  }
}

/** Puts the timeline entries of one probe event. */
function onEvent(plugin: AppPlugin, tracked: Tracked, event: ProbeEvent): void {
  const label = tracked.label();
  if (event.kind === "socket") {
    const title = event.state === "open" ? "Connected" : `Disconnected${event.code === undefined ? "" : ` (${event.code})`}`;
    emit(plugin, CHAT, { title, subtitle: label, data: { agent: label, ...event }, logType: event.state === "open" ? "default" : "warning" }, event.time);
    return;
  }
  if (event.kind === "read") {
    const title = `Transcript read ${event.phase}`;
    const subtitle = event.phase === "answered" ? `${event.count} message(s)` : event.first ? "first load" : label;
    const error = event.error === undefined ? {} : { error: event.error instanceof Error ? event.error.message : String(event.error) };
    emit(plugin, CHAT, { title, subtitle, data: { agent: label, ...event, ...error }, logType: event.phase === "failed" ? "error" : "default" }, event.time);
    return;
  }
  const frame = parse(event.data);
  const type = typeof frame === "string" ? "not JSON" : String(frame.type);
  const turns = tracked.turns;
  // A connection's node leaves the chat protocol's frames to the chat on it (the frames layer would show them twice).
  if (!turns && CHAT_FRAME_TYPES.has(type)) return;
  const id = typeof frame === "string" || typeof frame.id !== "string" ? undefined : frame.id;
  const inbound = event.kind === "frame-in";
  emit(
    plugin,
    FRAMES,
    {
      title: `${inbound ? "⇣" : "⇡"} ${type}`,
      subtitle: typeof frame === "string" ? frame.slice(0, 60) : (chunkType(frame) ?? id ?? label),
      data: { agent: label, direction: inbound ? "in" : "out", frame },
      groupId: id
    },
    event.time
  );
  if (typeof frame === "string" || id === undefined || !turns) return;
  if (!inbound && frame.type === "cf_agent_use_chat_request") {
    turns.set(id, "sent here");
    emit(plugin, CHAT, { title: "Turn started", subtitle: id, data: { agent: label, requestId: id }, groupId: id }, event.time);
  }
  if (inbound && frame.type === "cf_agent_use_chat_response") {
    if (!turns.has(id) && frame.done !== true) {
      turns.set(id, frame.replay === true ? "resumed" : "observed");
      emit(plugin, CHAT, { title: "Turn observed", subtitle: id, data: { agent: label, requestId: id }, groupId: id }, event.time);
    }
    const failed = frame.error === true;
    if (frame.done === true || failed) {
      turns.delete(id);
      const outcome = failed ? "error" : typeof frame.outcome === "string" ? frame.outcome : "completed";
      emit(plugin, CHAT, { title: "Turn ended", subtitle: `${id}: ${outcome}`, data: { agent: label, requestId: id, outcome }, groupId: id, logType: failed ? "error" : "default" }, event.time);
    }
  }
}

/** Shows a chat in Vue Devtools until its probe is disposed. */
export function inspectChat(probe: ChatProbe, chat: InspectedChat): void {
  track(probe, chatNode(chat));
}

/** Shows a `useAgent` connection in Vue Devtools until its probe is disposed. */
export function inspectConnection(probe: ChatProbe, connection: InspectedConnection): void {
  track(probe, connectionNode(connection));
}

function track(probe: ChatProbe, tracked: Tracked): void {
  if (probe.disposed) return;
  const plugin = pluginOf(probe);
  const id = `agents-vue-${++nodeCount}`;
  plugin.nodes.set(id, tracked);
  // One refresh per burst of changes (a streaming reply changes the cells at every frame).
  let due: ReturnType<typeof setTimeout> | null = null;
  const refresh = () => {
    if (due !== null) return;
    due = setTimeout(() => {
      due = null;
      plugin.api?.sendInspectorTree(INSPECTOR);
      plugin.api?.sendInspectorState(INSPECTOR);
    }, 50);
  };
  const scope = effectScope(true);
  scope.run(() => {
    watch(
      () => Object.values(tracked.cells).map((cell) => cell.value),
      refresh,
      { flush: "post" }
    );
  });
  probe.attach((event) => {
    onEvent(plugin, tracked, event);
    if (event.kind !== "frame-in" && event.kind !== "frame-out") return;
    // Running streams change with frames, not with the cells.
    refresh();
  });
  refresh();
  probe.detach = () => {
    scope.stop();
    if (due !== null) clearTimeout(due);
    due = null;
    plugin.nodes.delete(id);
    refresh();
  };
}
