/**
 * Browser-side helpers of the chaos suite: the seeded random source, the
 * audit that counts lost and duplicated messages, the stuck-state check, and
 * the figures each scenario reports.
 *
 * Definitions (RELIABILITY.md repeats them):
 * - lost: a message one side has (client or server, after quiescence) that
 *   the other lacks, or whose text differs from the other side's;
 * - duplicated: a message id twice in one transcript, a message the test sent
 *   once present twice, or a text part repeated (a text equal to its
 *   expected text twice over, or two text parts of which one is a prefix of
 *   the other);
 * - stuck: after quiescence, `status` not ready/error, or `isStreaming`,
 *   `isServerStreaming` or `isToolContinuation` true, or queued messages
 *   while the socket is open.
 */
import type { UIMessage } from "ai";
import { commands } from "vitest/browser";
import type { ChaosRecord, ChaosSettings } from "./chaos-commands";
import type { Chat } from "./chat";

export type { ChaosRecord, ChaosSettings };

let cached: ChaosSettings | undefined;
/** The run's seed and size (`SEED=`, `CHAOS_FULL=1`), printed once per file. */
export async function chaosSettings(): Promise<ChaosSettings> {
  if (!cached) {
    cached = await commands.chaosSettings();
    console.log(`chaos: seed ${cached.seed} (${cached.full ? "full" : "quick"}); rerun with SEED=${cached.seed}`);
  }
  return cached;
}

/** mulberry32: a small seeded generator, so a seed replays the same trials. */
export function rng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [min, max]. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!
  };
}
export type Rng = ReturnType<typeof rng>;

/** A sub-seed per scenario, so changing one scenario leaves the others' trials alone. */
export function scenarioSeed(seed: number, scenario: string): number {
  let h = seed >>> 0;
  for (const c of scenario) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

export const textParts = (message: UIMessage) =>
  message.parts.flatMap((part) => (part.type === "text" ? [part.text] : []));

const partKey = (part: UIMessage["parts"][number]) => {
  if (part.type === "text") return `text:${part.text}`;
  const call = part as { toolCallId?: unknown; state?: unknown };
  return typeof call.toolCallId === "string" ? `${part.type}:${call.toolCallId}` : part.type;
};

/** What two sides must agree on: id, role, and each part (text by its text). */
export const messageKey = (message: UIMessage) => `${message.role}|${message.parts.map(partKey).join("|")}`;

export interface Audit {
  lost: number;
  duplicated: number;
  /** Repeated text the server stored itself and the client shows faithfully (not the client's doing). */
  upstream: number;
  notes: string[];
}

/** Duplicated text inside one message: `expected` twice over, or two text parts where one is a prefix of the other. */
function repeatedText(message: UIMessage, expected: string | undefined): boolean {
  const texts = textParts(message).filter((text) => text.length > 0);
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      if (texts[i]!.startsWith(texts[j]!) || texts[j]!.startsWith(texts[i]!)) return true;
    }
  }
  return expected !== undefined && expected.length > 0 && texts.join("").includes(expected + expected);
}

/**
 * Compares a client's transcript with the server's.
 * `expectedText(message)` may name the text a reply should have; `sentOnce`
 * lists texts of user messages the test sent exactly once.
 */
export function audit(
  client: readonly UIMessage[],
  server: readonly UIMessage[],
  options: { expectedText?: (message: UIMessage) => string | undefined; sentOnce?: readonly string[]; label?: string } = {}
): Audit {
  const notes: string[] = [];
  const label = options.label ? `${options.label}: ` : "";
  let lost = 0;
  let duplicated = 0;
  let upstream = 0;
  const serverKeys = new Map(server.map((message) => [message.id, messageKey(message)]));
  for (const [side, list] of [["client", client], ["server", server]] as const) {
    const seen = new Set<string>();
    for (const message of list) {
      if (seen.has(message.id)) {
        duplicated++;
        notes.push(`${label}${side} has message ${message.id} twice`);
      }
      seen.add(message.id);
      if (repeatedText(message, options.expectedText?.(message))) {
        const text = JSON.stringify(textParts(message).map((t) => (t.length > 60 ? `${t.slice(0, 28)}…${t.slice(-28)}` : t)));
        if (side === "server" || serverKeys.get(message.id) === messageKey(message)) {
          // The server stored it so; the client mirrors it (counted once, from the server side).
          if (side === "server") {
            upstream++;
            notes.push(`${label}the server stored message ${message.id} with repeated text: ${text}`);
          }
        } else {
          duplicated++;
          notes.push(`${label}client message ${message.id} repeats its text: ${text}`);
        }
      }
    }
    for (const text of options.sentOnce ?? []) {
      const copies = list.filter((message) => message.role === "user" && textParts(message).join("") === text).length;
      if (copies > 1) {
        duplicated += copies - 1;
        notes.push(`${label}${side} has ${copies} copies of "${text}"`);
      }
    }
  }
  const serverById = new Map(server.map((message) => [message.id, message]));
  const clientById = new Map(client.map((message) => [message.id, message]));
  for (const message of server) {
    const mine = clientById.get(message.id);
    if (!mine) {
      lost++;
      notes.push(`${label}client lacks ${message.role} ${message.id} "${textParts(message).join("").slice(0, 60)}"`);
    } else if (messageKey(mine) !== messageKey(message)) {
      lost++;
      notes.push(`${label}${message.id} differs: client ${messageKey(mine).slice(0, 160)} / server ${messageKey(message).slice(0, 160)}`);
    }
  }
  for (const message of client) {
    if (!serverById.has(message.id)) {
      lost++;
      notes.push(`${label}server lacks ${message.role} ${message.id} "${textParts(message).join("").slice(0, 60)}"`);
    }
  }
  // Same ids, same content, other order.
  if (lost === 0 && client.map((m) => m.id).join() !== server.map((m) => m.id).join()) {
    lost++;
    notes.push(`${label}order differs: client ${client.map((m) => m.id).join(",")} / server ${server.map((m) => m.id).join(",")}`);
  }
  return { lost, duplicated, upstream, notes };
}

/** Why a chat is not idle after quiescence (empty when it is). */
export function stuckReasons(chat: Chat): string[] {
  const reasons: string[] = [];
  const status = chat.status.value;
  if (status !== "ready" && status !== "error") reasons.push(`status ${status}`);
  if (chat.isStreaming.value) reasons.push("isStreaming");
  if (chat.isServerStreaming.value) reasons.push("isServerStreaming");
  if (chat.isToolContinuation.value) reasons.push("isToolContinuation");
  if (chat.queuedMessages.value.length > 0 && chat.connectionStatus.value === "open") {
    reasons.push(`${chat.queuedMessages.value.length} queued while open`);
  }
  return reasons;
}

/** Waits (polling, not sleeping a fixed time) until `check` passes; false on timeout. */
export async function until(check: () => boolean | Promise<boolean>, timeout = 15_000, interval = 10): Promise<boolean> {
  const deadline = performance.now() + timeout;
  for (;;) {
    try {
      if (await check()) return true;
    } catch {
      // not yet
    }
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Waits for a chat to stop being stuck; the reasons that remain after `timeout`. */
export async function settle(chat: Chat, timeout = 20_000): Promise<string[]> {
  await until(() => stuckReasons(chat).length === 0, timeout, 20);
  return stuckReasons(chat);
}

/** Figures of one scenario, accumulated trial by trial. */
export class Figures {
  readonly record: ChaosRecord;
  constructor(scenario: string) {
    this.record = {
      scenario,
      trials: 0,
      faults: 0,
      survived: 0,
      lost: 0,
      duplicated: 0,
      stuck: 0,
      other: 0,
      upstream: 0,
      notes: [],
      upstreamNotes: []
    };
  }

  /** Adds one trial's outcome. */
  trial(outcome: {
    faults: number;
    lost?: number;
    duplicated?: number;
    stuck?: number;
    other?: number;
    upstream?: number;
    notes?: string[];
  }) {
    const r = this.record;
    const lost = outcome.lost ?? 0;
    const duplicated = outcome.duplicated ?? 0;
    const stuck = outcome.stuck ?? 0;
    const other = outcome.other ?? 0;
    r.trials++;
    r.faults += outcome.faults;
    r.lost += lost;
    r.duplicated += duplicated;
    r.stuck += stuck;
    r.other += other;
    r.upstream += outcome.upstream ?? 0;
    if (outcome.upstream) {
      for (const note of outcome.notes ?? []) {
        if (note.includes("the server stored") && r.upstreamNotes!.length < 10) r.upstreamNotes!.push(`trial ${r.trials}: ${note}`);
      }
    }
    if (lost + duplicated + stuck + other === 0) {
      r.survived++;
      return;
    }
    // Notes explain failed trials only.
    for (const note of outcome.notes ?? []) if (r.notes!.length < 40) r.notes!.push(`trial ${r.trials}: ${note}`);
  }

  /** Adds what a conversation's clients did to learn the transcript (see `syncCounts`). */
  sync(counts: { reads: number; snapshots: number; connects: number }) {
    const sync = (this.record.sync ??= { reads: 0, snapshots: 0, connects: 0 });
    sync.reads += counts.reads;
    sync.snapshots += counts.snapshots;
    sync.connects += counts.connects;
  }

  /** Sends the figures to the runner; the test then expects `NO_FAILURES`. */
  async report(): Promise<{ lost: number; duplicated: number; stuck: number; other: number; notes: string }> {
    const r = this.record;
    await commands.chaosRecord(r);
    console.log(
      `chaos ${r.scenario}: ${r.trials} trials, ${r.faults} faults, ${r.survived} survived, ${r.lost} lost, ${r.duplicated} duplicated, ${r.stuck} stuck, ${r.other} other, ${r.upstream} upstream`
    );
    return { lost: r.lost, duplicated: r.duplicated, stuck: r.stuck, other: r.other, notes: r.notes!.join("\n") };
  }
}

/** What a scenario's `report()` must come to. */
export const NO_FAILURES = { lost: 0, duplicated: 0, stuck: 0, other: 0, notes: "" };

/** Where the caller of a patched API is: a few stack frames, origin stripped. */
const where = (): string =>
  (new Error().stack ?? "")
    .split("\n")
    .slice(3, 9)
    .map((line) => line.trim().replace(/\(?https?:\/\/[^/]+\//, "(").replace(/\?v=[0-9a-f]+/, ""))
    .join(" | ");

const keyOf = (type: string, options: unknown) =>
  `${type}|${typeof options === "boolean" ? options : !!(options as { capture?: boolean } | undefined)?.capture}`;

/**
 * Counts timers and event listeners the page holds, from now on: timers set
 * and not yet fired or cleared, listeners added and not removed (by
 * `removeEventListener` or their `signal`). `once` listeners are not counted.
 */
export function instrumentPage() {
  const timers = new Map<number, string>();
  const listeners = new Map<EventTarget, Map<string, Map<unknown, string>>>();
  type SetTimer = (handler: TimerHandler, delay?: number, ...args: unknown[]) => number;
  type ClearTimer = (id?: number) => void;
  const original = {
    setTimeout: window.setTimeout.bind(window) as unknown as SetTimer,
    clearTimeout: window.clearTimeout.bind(window) as ClearTimer,
    setInterval: window.setInterval.bind(window) as unknown as SetTimer,
    clearInterval: window.clearInterval.bind(window) as ClearTimer,
    add: EventTarget.prototype.addEventListener,
    remove: EventTarget.prototype.removeEventListener
  };
  const patched: { setTimeout: SetTimer; setInterval: SetTimer; clearTimeout: ClearTimer; clearInterval: ClearTimer } = {
    setTimeout: (handler, delay, ...args) => {
      const id = original.setTimeout(
        (...inner: unknown[]) => {
          timers.delete(id);
          if (typeof handler === "function") (handler as (...a: unknown[]) => void)(...inner);
        },
        delay,
        ...args
      );
      timers.set(id, `timeout ${delay ?? 0} ms at ${where()}`);
      return id;
    },
    setInterval: (handler, delay, ...args) => {
      const id = original.setInterval(handler, delay, ...args);
      timers.set(id, `interval ${delay ?? 0} ms at ${where()}`);
      return id;
    },
    clearTimeout: (id) => {
      if (id !== undefined) timers.delete(id);
      original.clearTimeout(id);
    },
    clearInterval: (id) => {
      if (id !== undefined) timers.delete(id);
      original.clearInterval(id);
    }
  };
  Object.assign(window, patched);
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    original.add.call(this, type, listener, options);
    const once = typeof options === "object" && options?.once;
    if (!listener || once) return;
    const key = keyOf(type, options);
    let byType = listeners.get(this);
    if (!byType) listeners.set(this, (byType = new Map()));
    let set = byType.get(key);
    if (!set) byType.set(key, (set = new Map()));
    set.set(listener, where());
    const signal = typeof options === "object" ? options?.signal : undefined;
    signal?.addEventListener("abort", () => set!.delete(listener), { once: true });
  };
  EventTarget.prototype.removeEventListener = function (type, listener, options) {
    original.remove.call(this, type, listener, options);
    listeners.get(this)?.get(keyOf(type, options))?.delete(listener);
  };
  return {
    /** Timers pending now, with where each was set. */
    timers: () => [...timers.values()],
    /**
     * Listeners attached now, by target kind and event type. Left-overs are
     * those the library added (a frame in src/) and those on a socket that is
     * not closed; an object's listeners on itself die with it.
     */
    listeners: () => {
      const found: string[] = [];
      for (const [target, byType] of listeners) {
        for (const [key, set] of byType) {
          const state = target instanceof WebSocket ? `(readyState ${target.readyState})` : "";
          for (const at of set.values()) found.push(`${target.constructor.name}${state}:${key} added at ${at}`);
        }
      }
      return found;
    },
    leftoverListeners() {
      return this.listeners().filter(
        (l) => /added at at [^|]*\(src\//.test(l) || /^WebSocket\(readyState [01]\)/.test(l)
      );
    },
    restore: () => {
      Object.assign(window, {
        setTimeout: original.setTimeout,
        clearTimeout: original.clearTimeout,
        setInterval: original.setInterval,
        clearInterval: original.clearInterval
      });
      EventTarget.prototype.addEventListener = original.add;
      EventTarget.prototype.removeEventListener = original.remove;
    }
  };
}
