/**
 * Summarises a CDP `Profiler.stop()` profile: self time per function and per
 * source module. The profiled pages are built unminified, where rolldown
 * marks each bundled module with `//#region <path>` comments; a call frame's
 * line in the bundle tells which module it belongs to.
 */

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  /** Busy time sampled (idle excluded). */
  totalMs: number;
  /** Self time by group: agents-vue's own files one by one, then libraries, then V8 (GC, program, idle). */
  groups: Array<{ group: string; ms: number; pct: number }>;
  functions: Array<{ name: string; module: string; ms: number; pct: number }>;
}

interface Region {
  start: number;
  end: number;
  module: string;
}

const REGION_START = /^\/\/#region (.+)$/;
/** esbuild-style module headers: `// node_modules/vue/dist/x.js`, `// src/core/session.ts`. */
const MODULE_HEADER = /^\/\/ ((?:[\w@.+-]+\/)*[\w@.+-]+\.(?:[cm]?[jt]sx?|vue))$/;

/**
 * Module line ranges of a bundle built without minification: rolldown marks
 * modules with `//#region <path>` … `//#endregion`, or (Vite's unminified
 * output) with a `// <path>` line before each module.
 */
export function regionsOf(bundle: string): Region[] {
  const regions: Region[] = [];
  const lines = bundle.split("\n");
  let open: { start: number; module: string } | null = null;
  const close = (end: number) => {
    if (open) regions.push({ ...open, end });
    open = null;
  };
  lines.forEach((line, index) => {
    const start = REGION_START.exec(line) ?? MODULE_HEADER.exec(line);
    if (start) {
      close(index - 1);
      open = { start: index, module: start[1]!.trim() };
    } else if (line.startsWith("//#endregion")) close(index);
  });
  close(lines.length);
  return regions;
}

function moduleAt(regions: Region[], line: number): string {
  for (const region of regions) if (line >= region.start && line <= region.end) return region.module;
  return "(bundle)";
}

/** A readable group for a module path from a region comment. */
export function groupOf(module: string): string {
  const m = module.replace(/\\/g, "/");
  if (/(^|\/)src\/.+\.(ts|vue)/.test(m) && !m.includes("node_modules") && !m.includes("bench/pages")) {
    return `agents-vue ${m.slice(m.lastIndexOf("src/"))}`;
  }
  if (m.includes("bench/pages")) return "bench page";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m);
  if (pkg) {
    const name = pkg[1]!;
    if (name.startsWith("@vue/")) return `vue (${name.slice(5)})`;
    return name;
  }
  return m;
}

export function summarizeProfile(profile: CpuProfile, bundles: Map<string, string>, top = 15): ProfileSummary {
  const regionsByUrl = new Map<string, Region[]>();
  for (const [url, text] of bundles) regionsByUrl.set(url, regionsOf(text));
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the gap before sample i; the gap after it is its duration.
    const duration = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + duration);
  }
  const byFunction = new Map<string, { name: string; module: string; ms: number }>();
  const byGroup = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    // Idle samples are not work: percentages are of busy time.
    if (!ms || (!node.callFrame.url && node.callFrame.functionName === "(idle)")) continue;
    total += ms;
    const frame = node.callFrame;
    let module: string;
    let group: string;
    if (!frame.url) {
      module = frame.functionName || "(native)";
      group = /^\((garbage collector|program|idle|root)\)$/.test(module) ? module : "(native)";
    } else {
      const regions = [...regionsByUrl.entries()].find(([url]) => frame.url.endsWith(url))?.[1];
      module = regions ? moduleAt(regions, frame.lineNumber) : frame.url.replace(/^.*\//, "");
      group = regions ? groupOf(module) : "(other scripts)";
    }
    const name = frame.functionName || "(anonymous)";
    const key = `${name}@${frame.url}:${frame.lineNumber}:${frame.columnNumber}`;
    const entry = byFunction.get(key) ?? { name, module: groupOf(module), ms: 0 };
    entry.ms += ms;
    byFunction.set(key, entry);
    byGroup.set(group, (byGroup.get(group) ?? 0) + ms);
  }
  const pct = (ms: number) => (total ? (100 * ms) / total : 0);
  return {
    totalMs: total,
    groups: [...byGroup.entries()]
      .map(([group, ms]) => ({ group, ms, pct: pct(ms) }))
      .toSorted((a, b) => b.ms - a.ms),
    functions: [...byFunction.values()]
      .toSorted((a, b) => b.ms - a.ms)
      .slice(0, top)
      .map((f) => ({ ...f, pct: pct(f.ms) }))
  };
}
