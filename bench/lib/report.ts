/**
 * Turns bench results into the Markdown tables (stdout and BENCHMARKS.md),
 * the target checks and a hand-written SVG chart.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fmt, fmtRange, max, median, perRoundDiffs, perRoundRatios } from "./stats.ts";
import { CLIENTS, CLIENT_NAMES, type ChurnRecord, type Client, type Results, type RunRecord, type TargetResult } from "./types.ts";

const START = "<!-- bench:figures:start -->";
const END = "<!-- bench:figures:end -->";

type Pick = (record: RunRecord) => number | undefined;

/** Values of `pick` for a client, indexed by round (null where the run failed). */
function byRound(results: Results, scenario: string, client: Client, pick: Pick, variant?: string): Array<number | null> {
  const out: Array<number | null> = Array.from({ length: results.meta.rounds }, () => null);
  for (const r of results.runs) {
    if (r.scenario !== scenario || r.client !== client || r.round < 0 || (variant !== undefined && r.variant !== variant)) continue;
    const v = r.ok ? pick(r) : undefined;
    out[r.round] = typeof v === "number" ? v : null;
  }
  return out;
}

const task: Pick = (r) => r.taskMs;
const wall: Pick = (r) => r.wallMs;
const num = (key: string): Pick => (r) => (typeof r[key] === "number" ? (r[key] as number) : undefined);

const NUMERIC = /^(–|[−+-]?[\d.,]+( \(.*\))?)$/;

const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
const kb = (n: number) => (n / 1024).toFixed(1);
const sizeRow = (label: string, size: { raw: number; min: number; gzip: number }) => [label, kb(size.raw), kb(size.min), kb(size.gzip)];

/** A Markdown table; columns whose cells are all numbers are right-aligned. */
function table(header: string[], rows: string[][]): string {
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((row) => NUMERIC.test(row[i] ?? "")));
  return [line(header), line(numeric.map((n) => (n ? "---:" : "---"))), ...rows.map(line)].join("\n");
}

function failures(results: Results, scenario: string): string {
  const failed = results.runs.filter((r) => r.scenario === scenario && !r.ok && r.round >= 0);
  if (!failed.length) return "";
  return `\n\nFailed runs: ${failed.map((r) => `${r.client}${r.variant ? `/${r.variant}` : ""} round ${r.round + 1} (${r.error})`).join("; ")}`;
}

function streamTable(results: Results, scenario: "stream" | "replay", title: string): string {
  const rows = CLIENTS.map((client) => {
    const m = (pick: Pick) => median(byRound(results, scenario, client, pick));
    return [
      CLIENT_NAMES[client],
      fmt(m(task), 0),
      fmt(m((r) => r.scriptMs), 0),
      fmt(m(num("layoutMs")), 0),
      fmt(m(wall), 0),
      fmt(m((r) => r.commits), 0),
      client === "C" ? "–" : fmt(m((r) => r.renders), 0),
      fmt(m((r) => r.heapMB), 1)
    ];
  });
  const a = byRound(results, scenario, "A", task);
  const ratios = [
    `A/B TaskDuration ${fmtRange(perRoundRatios(a, byRound(results, scenario, "B", task)))}`,
    `A/C TaskDuration ${fmtRange(perRoundRatios(a, byRound(results, scenario, "C", task)))}`,
    `A − C final text ${fmtRange(perRoundDiffs(byRound(results, scenario, "A", wall), byRound(results, scenario, "C", wall)), 0)} ms`
  ];
  return `### ${title}\n\n${table(
    ["client", "TaskDuration ms", "ScriptDuration ms", "LayoutDuration ms", "final text ms", "DOM commits", "message renders", "heap MB"],
    rows
  )}\n\nPer-round ratios, median (min–max): ${ratios.join("; ")}.${failures(results, scenario)}`;
}

function longTable(results: Results): string {
  const { longShort, longLong, longChunks } = results.meta.settings as Record<string, number>;
  const rows: string[][] = [];
  const ratioLines: string[] = [];
  for (const client of CLIENTS) {
    for (const stored of [longShort, longLong]) {
      const m = (pick: Pick) => median(byRound(results, "long", client, pick, String(stored)));
      rows.push([
        CLIENT_NAMES[client],
        String(stored),
        fmt(m(task), 0),
        fmt(m(num("perChunkMs")), 3),
        fmt(m(wall), 0),
        fmt(m((r) => r.commits), 0),
        client === "C" ? "–" : fmt(m((r) => r.renders), 0),
        client === "C" ? "–" : fmt(m(num("rendersSettled")), 0)
      ]);
    }
    const ratio = perRoundRatios(
      byRound(results, "long", client, num("perChunkMs"), String(longLong)),
      byRound(results, "long", client, num("perChunkMs"), String(longShort))
    );
    ratioLines.push(`${client} ${fmtRange(ratio)}`);
  }
  return `### 3. Long transcript (${longChunks}-chunk turn after ${longShort} vs ${longLong} stored messages)\n\n${table(
    ["client", "stored", "TaskDuration ms", "per chunk ms", "final text ms", "DOM commits", "message renders", "renders incl. settle"],
    rows
  )}\n\nPer-chunk cost at ${longLong} ÷ at ${longShort}, per round, median (min–max): ${ratioLines.join("; ")}.${failures(results, "long")}`;
}

function sizeTable(results: Results): string {
  const s = results.sizes;
  const rows = [
    sizeRow("A: agents-vue `dist/index.js` (own code, peers external)", s.ours),
    sizeRow("B: upstream `agents/dist/chat/react.js` (the hook module alone)", s.upstream),
    sizeRow("A: `useAgentChat` only, tree-shaken bundle", s.oursUseAgentChat),
    sizeRow("B: `useAgentChat` + its private `agents` chunks", s.upstreamUseAgentChat),
    ...CLIENTS.map((c) => sizeRow(`page ${CLIENT_NAMES[c]} (HTML + JS, all deps)`, s.pages[c]))
  ];
  return `### 4. Size (KiB; esbuild minify, gzip -9)\n\n${table(["what", "raw", "min", "min+gzip"], rows)}\n\nA ÷ B min+gzip: module ${fmt(
    s.ours.gzip / s.upstream.gzip,
    2
  )}; \`useAgentChat\` with private code ${fmt(s.oursUseAgentChat.gzip / s.upstreamUseAgentChat.gzip, 2)}. Page totals are the bench pages (minimal markup), each file gzipped on its own.${
    s.oursUseAgent ? ` \`useAgent\` alone (also in \`dist/index.js\`): ${kb(s.oursUseAgent.gzip)} KiB min+gzip.` : ""
  }${breakdownLine(s.breakdown)}`;
}

function breakdownLine(breakdown: Array<{ file: string; bytes: number }> | undefined): string {
  if (!breakdown?.length) return "";
  const total = breakdown.reduce((sum, entry) => sum + entry.bytes, 0);
  const parts = breakdown
    .filter((entry) => entry.bytes > 0)
    .slice(0, 6)
    .map((entry) => `\`${entry.file}\` ${kb(entry.bytes)} KiB (${fmt((100 * entry.bytes) / total, 0)}%)`);
  return `\n\nWhere A's minified bytes are (esbuild metafile of \`src/index.ts\`, ${kb(total)} KiB in all): ${parts.join(", ")}.`;
}

function churnRecords(results: Results, client: Client): ChurnRecord[] {
  return results.runs.filter((r): r is ChurnRecord => r.scenario === "churn" && r.client === client && r.ok && r.round >= 0);
}

function churnTable(results: Results): string {
  const { churnCycles, churnReconnects } = results.meta.settings as Record<string, number>;
  const rows = CLIENTS.map((client) => {
    const rs = churnRecords(results, client);
    const g = (key: keyof ChurnRecord) => rs.map((r) => r[key] as number);
    return [
      CLIENT_NAMES[client],
      `${fmt(median(g("heapGrowthMB")), 2)} (max ${fmt(max(g("heapGrowthMB")), 2)})`,
      fmt(max(g("openSockets")), 0),
      fmt(max(g("liveListeners")), 0),
      fmt(max(g("pendingTimers")), 0),
      fmt(max(g("intervals")), 0),
      fmt(median(g("closedSocketListeners")), 0),
      fmt(median(g("socketsCreated")), 0),
      fmt(median(rs.map((r) => (r.churnMs ?? 0) / 1000)), 1)
    ];
  });
  const notes: string[] = [];
  for (const client of CLIENTS) {
    const worst = churnRecords(results, client).find((r) => (r.pendingTimers ?? 0) > 0 || (r.liveListeners ?? 0) > 0 || (r.openSockets ?? 0) > 0);
    if (worst) {
      notes.push(
        `${client} leftovers (round ${worst.round + 1}): ${[...(worst.liveListenerTypes ?? []), ...(worst.timerSites ?? [])].join("; ") || "sockets only"}`
      );
    }
  }
  return `### 5. Churn (${churnCycles} mount/unmount cycles, then ${churnReconnects} forced reconnects, then unmount)\n\n${table(
    [
      "client",
      "heap growth MB, median (max)",
      "open sockets",
      "leftover listeners",
      "pending timers",
      "intervals",
      "listeners on closed sockets",
      "sockets created",
      "time s"
    ],
    rows
  )}\n\nLeftovers are the worst round; heap growth is after a forced GC, against a baseline taken after one warm-up cycle.${
    notes.length ? `\n\n${notes.map((n) => `- ${n}`).join("\n")}` : ""
  }${failures(results, "churn")}`;
}

function requestBytes(results: Results, variant: string): number | null {
  return median(
    results.runs
      .filter((r) => r.scenario === "request" && r.variant === variant && r.ok && r.round >= 0)
      .map((r) => r.bytes as number | undefined)
  );
}

const REQUEST_ROWS = [
  { label: "A agents-vue, sendOnlyNewMessages off (default)", key: "A-off" },
  { label: "A agents-vue, sendOnlyNewMessages on", key: "A-on" },
  { label: "B upstream React (always the full transcript)", key: "B" }
];

function requestTable(results: Results): string {
  const sizes = [10, 100, 500];
  const rows = REQUEST_ROWS.map(({ label, key }) => {
    const bytes = sizes.map((n) => requestBytes(results, `${key}@${n}`));
    return [label, ...bytes.map((b) => fmt(b, 0)), bytes[0] && bytes[2] ? fmt(bytes[2] / bytes[0], 2) : "–"];
  });
  return `### 6. Request bytes per send (the \`cf_agent_use_chat_request\` frame)\n\n${table(
    ["client", "10 messages", "100 messages", "500 messages", "500 ÷ 10"],
    rows
  )}${failures(results, "request")}`;
}

function profileSection(results: Results): string {
  if (!results.profiles.length) return "";
  const parts = results.profiles.map(({ scenario, client, summary, trace }) => {
    const groups = table(
      ["where (self time)", "ms", "%"],
      summary.groups.slice(0, 12).map((g) => [g.group, fmt(g.ms, 1), fmt(g.pct, 1)])
    );
    const functions = table(
      ["function", "module", "ms", "%"],
      summary.functions.map((f) => [`\`${f.name}\``, f.module, fmt(f.ms, 1), fmt(f.pct, 1)])
    );
    const own = summary.groups.filter((g) => g.group.startsWith("agents-vue "));
    const ownLine = own.length
      ? `\n\nagents-vue's own code (all its files): ${fmt(own.reduce((sum, g) => sum + g.ms, 0), 0)} ms, ${fmt(own.reduce((sum, g) => sum + g.pct, 0), 1)}% of busy time.`
      : "";
    const traceTable = trace?.events.length
      ? `\n\nThe same run's trace, self time per event on the renderer main thread (${fmt(trace.totalMs, 0)} ms of tasks):\n\n${table(
          ["trace event", "ms", "%", "count"],
          trace.events.map((e) => [`\`${e.name}\``, fmt(e.ms, 1), fmt(e.pct, 1), String(e.count)])
        )}`
      : "";
    return `#### ${CLIENT_NAMES[client]}, ${scenario} (one profiled run, unminified build, ${fmt(summary.totalMs, 0)} ms busy)\n\n${groups}${ownLine}\n\n${functions}${traceTable}`;
  });
  return `### CPU profiles\n\nOne profiled run each (sampling every 100 µs) on an unminified build of the same pages; self time, idle excluded. \`(program)\` is native renderer work the sampler cannot attribute to a JS function.\n\n${parts.join("\n\n")}`;
}

function ratioMedian(a: Array<number | null>, b: Array<number | null>): number | null {
  return median(perRoundRatios(a, b));
}

export function targetsOf(results: Results): TargetResult[] {
  const out: TargetResult[] = [];
  // Issue 30's targets: A within 1.4 × the floor's main-thread time, and its final text within 100 ms of the floor's.
  const FLOOR_RATIO = 1.4;
  const FINAL_TEXT_MS = 100;
  const has = (scenario: string) => results.runs.some((r) => r.scenario === scenario && r.round >= 0);
  const check = (scenario: string, target: string, value: number | null, limit: number, show: (v: number) => string, below = false) =>
    out.push({
      scenario,
      target,
      measured: value === null ? "no data" : show(value),
      holds: value === null ? null : below ? value < limit : value <= limit
    });
  for (const scenario of ["stream", "replay"] as const) {
    if (!has(scenario)) continue;
    const label = scenario === "stream" ? "Stream" : "Replay";
    const a = byRound(results, scenario, "A", task);
    check(label, "A TaskDuration ≤ 0.6 × B", ratioMedian(a, byRound(results, scenario, "B", task)), 0.6, (v) => `${fmt(v, 2)} × B`);
    check(label, `A TaskDuration ≤ ${FLOOR_RATIO} × C`, ratioMedian(a, byRound(results, scenario, "C", task)), FLOOR_RATIO, (v) => `${fmt(v, 2)} × C`);
    check(
      label,
      `A final text ≤ C + ${FINAL_TEXT_MS} ms`,
      median(perRoundDiffs(byRound(results, scenario, "A", wall), byRound(results, scenario, "C", wall))),
      FINAL_TEXT_MS,
      (v) => `C ${v >= 0 ? "+" : "−"} ${fmt(Math.abs(v), 0)} ms`
    );
  }
  if (has("long")) {
    const { longShort, longLong } = results.meta.settings as Record<string, number>;
    check(
      "Long transcript",
      `A per-chunk cost at ${longLong} ≤ 1.5 × at ${longShort}`,
      ratioMedian(
        byRound(results, "long", "A", num("perChunkMs"), String(longLong)),
        byRound(results, "long", "A", num("perChunkMs"), String(longShort))
      ),
      1.5,
      (v) => `${fmt(v, 2)} ×`
    );
  }
  const s = results.sizes;
  check("Size", "A own code ≤ 0.75 × upstream hook module (min+gzip)", s.ours.gzip / s.upstream.gzip, 0.75, (v) => `${fmt(v, 2)} × (${s.ours.gzip} B vs ${s.upstream.gzip} B)`);
  const budgetFile = new URL("../size-budget.json", import.meta.url);
  const budget = existsSync(budgetFile) ? (JSON.parse(readFileSync(budgetFile, "utf8")) as { gzip: number; tolerance: number }) : null;
  out.push({
    scenario: "Size",
    target: "CI size budget: fail past the recorded figure + its tolerance",
    measured: budget
      ? `\`npm run size\`: budget ${budget.gzip} B + ${Math.round(budget.tolerance * 100)}% = ${Math.floor(budget.gzip * (1 + budget.tolerance))} B; now ${s.ours.gzip} B`
      : "no bench/size-budget.json",
    holds: budget ? s.ours.gzip <= budget.gzip * (1 + budget.tolerance) : false
  });
  if (has("churn")) {
    const rs = churnRecords(results, "A");
    const growth = median(rs.map((r) => r.heapGrowthMB ?? null));
    check("Churn", "A heap growth < 2 MB", growth, 2, (v) => `${fmt(v, 2)} MB (max ${fmt(max(rs.map((r) => r.heapGrowthMB ?? null)), 2)})`, true);
    const leftovers = rs.length ? Math.max(...rs.map((r) => (r.openSockets ?? 0) + (r.liveListeners ?? 0) + (r.pendingTimers ?? 0) + (r.intervals ?? 0))) : null;
    const worst = (key: keyof ChurnRecord) => fmt(max(rs.map((r) => r[key] as number)), 0);
    out.push({
      scenario: "Churn",
      target: "A: zero leftover listeners, timers and sockets",
      measured:
        leftovers === null
          ? "no data"
          : `sockets ${worst("openSockets")}, listeners ${worst("liveListeners")}, timers ${worst("pendingTimers")}, intervals ${worst("intervals")} (worst round)`,
      holds: leftovers === null ? null : leftovers === 0
    });
  }
  if (has("request")) {
    const on10 = requestBytes(results, "A-on@10");
    const on500 = requestBytes(results, "A-on@500");
    check(
      "Request bytes",
      "A with sendOnlyNewMessages: 500-message send ≤ 1.1 × 10-message send",
      on10 && on500 ? on500 / on10 : null,
      1.1,
      (v) => `${fmt(v, 2)} × (${on500} B vs ${on10} B)`
    );
  }
  return out;
}

function targetsTable(targets: TargetResult[]): string {
  return `### Targets\n\n${table(
    ["scenario", "target", "measured", "holds"],
    targets.map((t) => [t.scenario, t.target, t.measured, t.holds === null ? "no data" : t.holds ? "✅ yes" : "❌ no"])
  )}`;
}

// ---------------------------------------------------------------- chart

const COLORS: Record<Client, string> = { A: "#42b883", B: "#149eca", C: "#888888" };

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

interface Group {
  label: string;
  values: Array<{ key: string; color: string; value: number | null }>;
}

function barPanel(x0: number, y0: number, width: number, height: number, title: string, unit: string, groups: Group[]): string {
  const top = Math.max(1, ...groups.flatMap((g) => g.values.map((v) => v.value ?? 0)));
  const plotTop = y0 + 30;
  const plotBottom = y0 + height - 40;
  const plotHeight = plotBottom - plotTop;
  const groupWidth = width / groups.length;
  const out: string[] = [
    `<text x="${x0}" y="${y0 + 14}" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<line x1="${x0}" y1="${plotBottom}" x2="${x0 + width}" y2="${plotBottom}" stroke="#333"/>`
  ];
  groups.forEach((group, gi) => {
    const barWidth = Math.min(36, (groupWidth - 20) / group.values.length);
    const gx = x0 + gi * groupWidth + (groupWidth - barWidth * group.values.length) / 2;
    group.values.forEach((v, vi) => {
      const h = v.value === null ? 0 : (v.value / top) * plotHeight;
      const x = gx + vi * barWidth;
      out.push(`<rect x="${x.toFixed(1)}" y="${(plotBottom - h).toFixed(1)}" width="${(barWidth - 3).toFixed(1)}" height="${h.toFixed(1)}" fill="${v.color}"><title>${escapeXml(`${group.label} ${v.key}: ${v.value === null ? "no data" : `${v.value.toFixed(0)} ${unit}`}`)}</title></rect>`);
      out.push(`<text x="${(x + (barWidth - 3) / 2).toFixed(1)}" y="${(plotBottom - h - 3).toFixed(1)}" font-size="9" text-anchor="middle">${v.value === null ? "–" : v.value >= 100 ? v.value.toFixed(0) : v.value.toFixed(1)}</text>`);
    });
    out.push(`<text x="${(x0 + gi * groupWidth + groupWidth / 2).toFixed(1)}" y="${plotBottom + 16}" font-size="11" text-anchor="middle">${escapeXml(group.label)}</text>`);
  });
  out.push(`<text x="${x0}" y="${plotBottom + 32}" font-size="10" fill="#555">${escapeXml(unit)}</text>`);
  return out.join("\n");
}

export function chartOf(results: Results): string {
  const { longShort, longLong } = results.meta.settings as Record<string, number>;
  const taskGroups: Group[] = [
    { label: "Stream", scenario: "stream", variant: undefined },
    { label: "Replay", scenario: "replay", variant: undefined },
    { label: `Long @${longShort}`, scenario: "long", variant: String(longShort) },
    { label: `Long @${longLong}`, scenario: "long", variant: String(longLong) }
  ].map(({ label, scenario, variant }) => ({
    label,
    values: CLIENTS.map((client) => ({ key: CLIENT_NAMES[client], color: COLORS[client], value: median(byRound(results, scenario, client, task, variant)) }))
  }));
  const requestGroups: Group[] = [10, 100, 500].map((n) => ({
    label: `${n} messages`,
    values: REQUEST_ROWS.map(({ key }, i) => ({
      key,
      color: [COLORS.A, "#2c7a56", COLORS.B][i]!,
      value: requestBytes(results, `${key}@${n}`) === null ? null : requestBytes(results, `${key}@${n}`)! / 1024
    }))
  }));
  const legend = [
    ...CLIENTS.map((c) => ({ color: COLORS[c], label: CLIENT_NAMES[c] })),
    { color: "#2c7a56", label: "A with sendOnlyNewMessages" }
  ]
    .map((l, i) => `<rect x="${20 + i * 190}" y="${282}" width="12" height="12" fill="${l.color}"/><text x="${36 + i * 190}" y="${292}" font-size="12">${escapeXml(l.label)}</text>`)
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="860" height="310" viewBox="0 0 860 310" font-family="system-ui, sans-serif">
<rect width="860" height="310" fill="#fff"/>
${barPanel(20, 10, 480, 260, "Main-thread TaskDuration per scenario (median)", "ms", taskGroups)}
${barPanel(540, 10, 300, 260, "Request frame per send (median)", "KiB", requestGroups)}
${legend}
<text x="840" y="304" font-size="9" text-anchor="end" fill="#777">${escapeXml(`${results.meta.date.slice(0, 10)} · ${results.meta.commit} · ${results.meta.rounds} rounds · ${results.meta.cpus} CPUs`)}</text>
</svg>
`;
}

// ---------------------------------------------------------------- everything

export function renderReport(results: Results): {
  markdown: string;
  targets: TargetResult[];
  chart: string;
  writeBenchmarks(path: string): void;
} {
  const targets = targetsOf(results);
  const m = results.meta;
  const { streamChunks, replayChunks } = m.settings as Record<string, number>;
  const sections = [
    `_Run ${m.date} on commit \`${m.commit}\`: ${m.rounds} rounds, ${m.cpus} CPUs (load average at the end ${m.loadAverage.join(" / ")}), Chromium ${m.chromium}, Node ${m.node}, ${m.durationS} s in all._`,
    targetsTable(targets),
    streamTable(results, "stream", `1. Stream (one ${streamChunks.toLocaleString("en")}-chunk turn)`),
    streamTable(results, "replay", `2. Replay (mount half-way through a ${replayChunks.toLocaleString("en")}-chunk stream)`),
    longTable(results),
    sizeTable(results),
    churnTable(results),
    requestTable(results),
    profileSection(results)
  ].filter(Boolean);
  const markdown = sections.join("\n\n");
  return {
    markdown,
    targets,
    chart: chartOf(results),
    writeBenchmarks(path: string) {
      const body = `${START}\n\n![TaskDuration per scenario and request bytes](chart.svg)\n\n${markdown}\n\n${END}`;
      const current = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
      const start = current.indexOf(START);
      const end = current.indexOf(END);
      const next = start >= 0 && end > start ? `${current.slice(0, start)}${body}${current.slice(end + END.length)}` : `${current.trimEnd()}\n\n## Latest figures\n\n${body}\n`;
      writeFileSync(path, next);
    }
  };
}
