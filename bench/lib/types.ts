/** The shape of `bench/results.json`. */
import type { ProfileSummary } from "./profile.ts";
import type { TraceSummary } from "./trace.ts";
import type { Size } from "./size.ts";

export type Client = "A" | "B" | "C";
export const CLIENTS: readonly Client[] = ["A", "B", "C"];
export const CLIENT_NAMES: Record<Client, string> = {
  A: "A agents-vue",
  B: "B upstream React",
  C: "C floor"
};

/** One measured run: a client, a round, a scenario (and variant). */
export interface RunRecord {
  scenario: string;
  variant?: string;
  client: Client;
  round: number;
  ok: boolean;
  error?: string;
  pageErrors?: string[];
  /** CDP Performance.getMetrics TaskDuration delta over the measured window, ms. */
  taskMs?: number;
  /** CDP ScriptDuration delta, ms. */
  scriptMs?: number;
  /** From the action (send or mount) to the final text in the DOM, ms (measured in the page). */
  wallMs?: number;
  /** MutationObserver callbacks (DOM commits) in the window. */
  commits?: number;
  /** Mutation records in the window. */
  records?: number;
  /** Message component renders (A, B) in the window. */
  renders?: number;
  /** JS heap used after the scenario and a forced GC, MB. */
  heapMB?: number;
  /** Request frame sizes sent in the window, bytes. */
  requestBytes?: number[];
  [extra: string]: unknown;
}

export interface ChurnRecord extends RunRecord {
  heapGrowthMB?: number;
  openSockets?: number;
  liveListeners?: number;
  closedSocketListeners?: number;
  pendingTimers?: number;
  intervals?: number;
  socketsCreated?: number;
  timerSites?: string[];
  liveListenerTypes?: string[];
  churnMs?: number;
}

export interface SizeResults {
  ours: Size;
  upstream: Size;
  oursUseAgentChat: Size;
  upstreamUseAgentChat: Size;
  /** `useAgent` alone, tree-shaken out of dist/index.js. */
  oursUseAgent?: Size;
  /** Minified bytes per source file of A's own code. */
  breakdown?: Array<{ file: string; bytes: number }>;
  pages: Record<Client, Size & { files: number }>;
}

export interface TargetResult {
  scenario: string;
  target: string;
  measured: string;
  holds: boolean | null;
}

export interface ProfileResult {
  scenario: string;
  client: Client;
  summary: ProfileSummary;
  /** Self time per trace event on the renderer main thread, same run. */
  trace?: TraceSummary;
}

export interface Results {
  meta: {
    date: string;
    commit: string;
    node: string;
    chromium: string;
    cpus: number;
    loadAverage: number[];
    rounds: number;
    durationS: number;
    settings: Record<string, number>;
  };
  runs: RunRecord[];
  sizes: SizeResults;
  targets: TargetResult[];
  profiles: ProfileResult[];
}
