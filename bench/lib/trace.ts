/**
 * Summarises a Chromium trace (`browser.startTracing` / `stopTracing`) of one
 * page: self time per trace event on the renderer's main thread, to say what
 * the native time the CPU profile calls `(program)` was spent on (event
 * dispatch, microtasks, style, layout, paint, garbage collection, ...).
 */

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: { type?: string; url?: string } };
}

export interface TraceSummary {
  /** Sum of top-level task time on the main thread, ms. */
  totalMs: number;
  events: Array<{ name: string; ms: number; pct: number; count: number }>;
}

function labelOf(event: TraceEvent): string {
  if (event.name === "EventDispatch" && event.args?.data?.type) return `EventDispatch (${event.args.data.type})`;
  return event.name;
}

export function summarizeTrace(buffer: Buffer | string, top = 14): TraceSummary {
  const parsed = JSON.parse(buffer.toString()) as { traceEvents?: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
  // The renderer main thread that ran the page: the CrRendererMain with the most task time.
  const mains = events.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain");
  let main: { pid: number; tid: number } | null = null;
  let best = -1;
  for (const m of mains) {
    const busy = events
      .filter((e) => e.pid === m.pid && e.tid === m.tid && e.ph === "X" && e.name === "RunTask")
      .reduce((sum, e) => sum + (e.dur ?? 0), 0);
    if (busy > best) {
      best = busy;
      main = { pid: m.pid, tid: m.tid };
    }
  }
  if (!main) return { totalMs: 0, events: [] };
  const complete = events
    .filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && typeof e.dur === "number")
    .toSorted((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const self = new Map<string, { ms: number; count: number }>();
  const stack: Array<{ event: TraceEvent; end: number; childTime: number }> = [];
  let total = 0;
  const close = (entry: { event: TraceEvent; end: number; childTime: number }) => {
    const label = labelOf(entry.event);
    const own = Math.max(0, (entry.event.dur ?? 0) - entry.childTime) / 1000;
    const slot = self.get(label) ?? { ms: 0, count: 0 };
    slot.ms += own;
    slot.count++;
    self.set(label, slot);
  };
  for (const event of complete) {
    while (stack.length && stack.at(-1)!.end <= event.ts) close(stack.pop()!);
    const parent = stack.at(-1);
    if (parent) parent.childTime += event.dur ?? 0;
    else total += event.dur ?? 0;
    stack.push({ event, end: event.ts + (event.dur ?? 0), childTime: 0 });
  }
  while (stack.length) close(stack.pop()!);
  const totalMs = total / 1000;
  return {
    totalMs,
    events: [...self.entries()]
      .map(([name, { ms, count }]) => ({ name, ms, count, pct: totalMs ? (100 * ms) / totalMs : 0 }))
      .toSorted((a, b) => b.ms - a.ms)
      .slice(0, top)
  };
}
