import type { AgentToolRunPart } from "agents/agent-tools";
import {
  type AgentToolEventMessage,
  type AgentToolEventState,
  type AgentToolRunState,
  applyAgentToolEvent,
  createAgentToolEventState
} from "agents/chat";
import { type ComputedRef, type MaybeRefOrGetter, computed, shallowRef, toValue, watch } from "vue";
import type { AgentSocket } from "./core/connection";
import { type SharedAgentConnection, sharedSocketOf } from "./shared-connection";
import { onDispose } from "./lifecycle";

/** Options of {@link useAgentToolEvents}. */
export interface UseAgentToolEventsOptions {
  /**
   * The connection to listen on: `useAgent`'s return, `useAgentChat`'s return
   * (its own socket), an `AgentClient`, or any socket of the agent; a ref or
   * getter to follow one that changes. `null` listens to nothing.
   */
  agent: MaybeRefOrGetter<SharedAgentConnection | null | undefined>;
}

/** What {@link useAgentToolEvents} returns. */
export interface UseAgentToolEventsReturn<Part extends AgentToolRunPart = AgentToolRunPart> {
  /** Every agent-tool run seen, by run id. */
  runsById: ComputedRef<Record<string, AgentToolRunState<Part>>>;
  /** Runs started by a tool call, by the parent's tool call id, in display order. */
  runsByToolCallId: ComputedRef<Record<string, AgentToolRunState<Part>[]>>;
  /** Runs started without a tool call (e.g. `runAgentTool()` from server code), in display order. */
  unboundRuns: ComputedRef<AgentToolRunState<Part>[]>;
  /** The runs of one tool call (`[]` when it has none); reactive where it is read. */
  getRunsForToolCall(toolCallId: string): AgentToolRunState<Part>[];
  /** Forgets every run here (the server keeps them; the next connect replays them). */
  resetLocalState(): void;
}

const TOOL_EVENT = "agent-tool-event";
// The reserved data parts a running sub-agent reports progress with.
const PROGRESS_PART = "data-agent-progress";
const MILESTONE_PART = "data-agent-milestone";

function isToolEvent(value: unknown): value is AgentToolEventMessage {
  if (typeof value !== "object" || value === null) return false;
  const frame = value as { type?: unknown; event?: { runId?: unknown; kind?: unknown } };
  return frame.type === TOOL_EVENT && typeof frame.event?.runId === "string" && typeof frame.event.kind === "string";
}

/**
 * What makes an event the same event when the server replays it on connect:
 * a stored chunk by its position, a milestone by its own sequence, a progress
 * report or an unstored chunk by its id, a lifecycle event by its content.
 */
function replayKey(message: AgentToolEventMessage): string {
  const { event } = message;
  let identity: string;
  if (event.kind !== "chunk") {
    identity = `event:${JSON.stringify(event)}`;
  } else if (event.unstoredId !== undefined) {
    identity = `unstored:${event.unstoredId}`;
  } else {
    identity = `seq:${message.sequence}`;
    if (event.body.includes(PROGRESS_PART) || event.body.includes(MILESTONE_PART)) {
      try {
        const part = JSON.parse(event.body) as { type?: unknown; id?: unknown; data?: { name?: unknown; sequence?: unknown } };
        if (part.type === MILESTONE_PART && typeof part.data?.name === "string") {
          identity = `milestone:${typeof part.data.sequence === "number" ? part.data.sequence : 0}`;
        } else if (part.type === PROGRESS_PART) {
          identity = typeof part.id === "string" ? `progress:${part.id}` : `progress:${message.sequence}:${event.body}`;
        }
      } catch {
        // Not a JSON part: keyed by position like any chunk.
      }
    }
  }
  return [message.parentToolCallId ?? "", event.runId, identity].join("\0");
}

/**
 * Follow the agent-tool runs of an agent (`agentTool()` / `runAgentTool()` on
 * the server): each run's status, its sub-agent's streamed message parts,
 * progress and milestones, grouped by the tool call that started it. The
 * server replays stored runs on every connect; replayed events already seen
 * are skipped, so a reconnect never doubles a run's text.
 *
 * Built on upstream's own reducers (`applyAgentToolEvent` from
 * `agents/chat`). A new socket (the conversation switched) starts from an
 * empty state; the listener is removed when the scope is disposed.
 */
export function useAgentToolEvents<Part extends AgentToolRunPart = AgentToolRunPart>(
  options: UseAgentToolEventsOptions
): UseAgentToolEventsReturn<Part> {
  const state = shallowRef<AgentToolEventState<Part>>(createAgentToolEventState<Part>());
  let seen = new Set<string>();

  const onMessage = (event: MessageEvent) => {
    if (typeof event.data !== "string" || !event.data.includes(TOOL_EVENT)) return;
    let frame: unknown;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!isToolEvent(frame)) return;
    const key = replayKey(frame);
    if (seen.has(key)) return;
    seen.add(key);
    state.value = applyAgentToolEvent<Part>(state.value, frame);
  };

  const resetLocalState = () => {
    seen = new Set();
    state.value = createAgentToolEventState<Part>();
  };

  let socket: AgentSocket | null = null;
  const detach = () => {
    socket?.removeEventListener("message", onMessage);
    socket = null;
  };

  watch(
    () => sharedSocketOf(toValue(options.agent)),
    (next) => {
      if (next === socket) return;
      const switched = socket !== null;
      detach();
      if (switched) resetLocalState();
      socket = next;
      socket?.addEventListener("message", onMessage);
    },
    { immediate: true }
  );

  onDispose(detach);

  const runsByToolCallId = computed(() => state.value.runsByToolCallId);
  return {
    runsById: computed(() => state.value.runsById),
    runsByToolCallId,
    unboundRuns: computed(() => state.value.unboundRuns),
    getRunsForToolCall: (toolCallId) => runsByToolCallId.value[toolCallId] ?? [],
    resetLocalState
  };
}
