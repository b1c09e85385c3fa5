import { vi } from "vitest";

/**
 * Vue Devtools (the browser extension) is outside the process: this hook
 * stands in for it, speaking the plugin protocol (`devtools-plugin:setup`).
 * It runs the plugin's setup at once and records what the plugin sends; the
 * tree and state are asked for as Devtools asks (the plugin's handlers fill a
 * payload).
 */
export interface Recorded {
  descriptor: Record<string, unknown>;
  inspectors: string[];
  layers: string[];
  events: Array<{ layerId: string; title: string; subtitle?: string; data: Record<string, unknown> }>;
  tree(): Array<{ id: string; label: string; tags?: Array<{ label: string }> }>;
  state(nodeId: string): Record<string, Array<{ key: string; value: unknown }>>;
  sends: number;
}

/** Puts the recording hook on the page (`vi.unstubAllGlobals()` takes it away). */
export function installDevtoolsHook(): Recorded {
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

