/**
 * The in-page half of the bench, shared by the three clients. Imported first
 * by every page entry, so its wrappers are in place before any client code
 * runs. `window.bench` is what `bench/run.ts` drives through Playwright.
 *
 * Always on (cheap): a MutationObserver on `#app` (commit count and the
 * final-text check), WebSocket construction tracking (weakly held), request
 * frame bytes and in-flight `fetch` count.
 *
 * With `?instrument` in the URL (churn runs only): every listener added or
 * removed on any EventTarget and every pending timer, to find leftovers.
 */

export interface MountConfig {
  /** Worker host, `127.0.0.1:PORT`. */
  host: string;
  /** Agent instance (conversation) name. */
  name: string;
  /** A: `sendOnlyNewMessages` (B and C ignore it). */
  sendOnlyNewMessages?: boolean;
  /** Churn only: reconnect without PartySocket's 3 s back-off, so 100 drops fit the time budget. */
  fastReconnect?: boolean;
}

/** What each client page registers. */
export interface ClientDriver {
  name: "A" | "B" | "C";
  mount(config: MountConfig): void;
  unmount(): void;
  send(text: string): void;
}

export interface FinalText {
  /** ms from `start()` until the marker was in the DOM. */
  ms: number;
  commits: number;
  records: number;
  renders: number;
}

export interface LeakCounts {
  /** Native sockets not CLOSED. */
  openSockets: number;
  socketsCreated: number;
  /** Listeners on window, document and on sockets (native or PartySocket) that are not closed. */
  liveListeners: number;
  /** Listeners still attached to closed sockets (garbage once nothing holds the socket). */
  closedSocketListeners: number;
  /** Listeners on every other target (elements, AbortSignals, ...). */
  otherListeners: number;
  pendingTimers: number;
  intervals: number;
  /** Where each pending timer was set (first stack frames), for the report. */
  timerSites: string[];
  liveListenerTypes: string[];
}

type Listener = EventListenerOrEventListenerObject;

const params = new URLSearchParams(location.search);
const instrumented = params.has("instrument");

const nativeSetTimeout = window.setTimeout.bind(window);
const nativeClearTimeout = window.clearTimeout.bind(window);
const NativeWebSocket = window.WebSocket;
const nativeSend = NativeWebSocket.prototype.send;
const nativeAdd = EventTarget.prototype.addEventListener;
const nativeRemove = EventTarget.prototype.removeEventListener;

const sleep = (ms: number) => new Promise<void>((resolve) => nativeSetTimeout(resolve, ms));

// ---------------------------------------------------------------- sockets
const sockets: Array<WeakRef<WebSocket>> = [];
class TrackedWebSocket extends NativeWebSocket {
  constructor(url: string | URL, protocols?: string | string[]) {
    super(url, protocols);
    sockets.push(new WeakRef(this));
  }
}
window.WebSocket = TrackedWebSocket as typeof WebSocket;

// Request frames sent in the window; kept by reference (strings are
// immutable) and measured after the window, so measuring costs nothing in it.
const requestFrames: string[] = [];
NativeWebSocket.prototype.send = function send(this: WebSocket, data: Parameters<WebSocket["send"]>[0]) {
  if (typeof data === "string" && data.startsWith('{"') && data.includes('"cf_agent_use_chat_request"')) requestFrames.push(data);
  return nativeSend.call(this, data);
};

function liveSockets(): WebSocket[] {
  const live: WebSocket[] = [];
  for (const ref of sockets) {
    const socket = ref.deref();
    if (socket && socket.readyState !== NativeWebSocket.CLOSED) live.push(socket);
  }
  return live;
}

// ---------------------------------------------------------------- fetch
let fetchesInFlight = 0;
const nativeFetch = window.fetch.bind(window);
window.fetch = async (...args: Parameters<typeof fetch>) => {
  fetchesInFlight++;
  try {
    return await nativeFetch(...args);
  } finally {
    fetchesInFlight--;
  }
};

// ---------------------------------------------------------------- listeners and timers (churn)
const listenerTargets: Array<WeakRef<EventTarget>> = [];
const knownTargets = new WeakSet<EventTarget>();
const listeners = new WeakMap<EventTarget, Map<string, Set<Listener>>>();
const timers = new Map<number, { interval: boolean; site: string }>();

function captureOf(options: boolean | EventListenerOptions | undefined): boolean {
  return typeof options === "boolean" ? options : Boolean(options?.capture);
}

function siteOf(): string {
  const stack = new Error("site").stack ?? "";
  return stack
    .split("\n")
    .slice(3, 6)
    .map((line) => line.trim().replace(/^at /, ""))
    .join(" < ");
}

if (instrumented) {
  EventTarget.prototype.addEventListener = function addEventListener(
    this: EventTarget,
    type: string,
    listener: Listener | null,
    options?: boolean | AddEventListenerOptions
  ) {
    nativeAdd.call(this, type, listener, options);
    const signal = typeof options === "object" ? options.signal : undefined;
    if (!listener || signal?.aborted) return;
    const key = `${type}${captureOf(options) ? "|capture" : ""}`;
    let byType = listeners.get(this);
    if (!byType) {
      byType = new Map();
      listeners.set(this, byType);
    }
    if (!knownTargets.has(this)) {
      knownTargets.add(this);
      listenerTargets.push(new WeakRef(this));
    }
    let set = byType.get(key);
    if (!set) byType.set(key, (set = new Set()));
    set.add(listener);
    const forget = () => set.delete(listener);
    if (typeof options === "object" && options.once) nativeAdd.call(this, type, forget, { once: true, capture: captureOf(options) });
    if (signal) nativeAdd.call(signal, "abort", forget, { once: true });
  };
  EventTarget.prototype.removeEventListener = function removeEventListener(
    this: EventTarget,
    type: string,
    listener: Listener | null,
    options?: boolean | EventListenerOptions
  ) {
    nativeRemove.call(this, type, listener, options);
    if (listener) listeners.get(this)?.get(`${type}${captureOf(options) ? "|capture" : ""}`)?.delete(listener);
  };

  const nativeSetInterval = window.setInterval.bind(window);
  const nativeClearInterval = window.clearInterval.bind(window);
  const wrapTimer = (interval: boolean) =>
    function set(handler: TimerHandler, delay?: number, ...args: unknown[]): number {
      const native = interval ? nativeSetInterval : nativeSetTimeout;
      if (typeof handler !== "function") return native(handler, delay);
      const id: number = native(
        (...callArgs: unknown[]) => {
          if (!interval) timers.delete(id);
          (handler as (...a: unknown[]) => void)(...callArgs);
        },
        delay,
        ...args
      );
      timers.set(id, { interval, site: `${interval ? "interval" : "timeout"} ${delay ?? 0} ms @ ${siteOf()}` });
      return id;
    };
  window.setTimeout = wrapTimer(false) as typeof setTimeout;
  window.setInterval = wrapTimer(true) as typeof setInterval;
  window.clearTimeout = ((id?: number) => {
    if (id !== undefined) timers.delete(id);
    nativeClearTimeout(id);
  }) as typeof clearTimeout;
  window.clearInterval = ((id?: number) => {
    if (id !== undefined) timers.delete(id);
    nativeClearInterval(id);
  }) as typeof clearInterval;
}

function isSocketLike(target: EventTarget): target is EventTarget & { readyState: number } {
  const candidate = target as { readyState?: unknown; reconnect?: unknown; send?: unknown };
  return target instanceof NativeWebSocket || (typeof candidate.reconnect === "function" && typeof candidate.send === "function");
}

function leakCounts(): LeakCounts {
  let liveListeners = 0;
  let closedSocketListeners = 0;
  let otherListeners = 0;
  const liveListenerTypes: string[] = [];
  for (const ref of listenerTargets) {
    const target = ref.deref();
    if (!target) continue;
    let count = 0;
    const types: string[] = [];
    for (const [type, set] of listeners.get(target) ?? []) {
      count += set.size;
      if (set.size) types.push(`${type}×${set.size}`);
    }
    if (!count) continue;
    if (target === window || target === document) {
      liveListeners += count;
      liveListenerTypes.push(`${target === window ? "window" : "document"}: ${types.join(", ")}`);
    } else if (isSocketLike(target)) {
      if (target.readyState === 3) closedSocketListeners += count;
      else {
        liveListeners += count;
        liveListenerTypes.push(`${target instanceof NativeWebSocket ? "WebSocket" : "PartySocket"}: ${types.join(", ")}`);
      }
    } else otherListeners += count;
  }
  let intervals = 0;
  for (const timer of timers.values()) if (timer.interval) intervals++;
  return {
    openSockets: liveSockets().length,
    socketsCreated: sockets.length,
    liveListeners,
    closedSocketListeners,
    otherListeners,
    pendingTimers: timers.size,
    intervals,
    timerSites: [...timers.values()].map((timer) => timer.site),
    liveListenerTypes
  };
}

// ---------------------------------------------------------------- DOM commits and final text
let commits = 0;
let records = 0;
let renders = 0;
let startedAt = 0;
let waiter: { marker: string; resolve: (value: FinalText) => void } | null = null;

function messageCount(): number {
  return document.getElementById("chat")?.childElementCount ?? 0;
}

function checkFinal(): void {
  if (!waiter) return;
  // Every client renders a message as one element holding one text node.
  const last = document.getElementById("chat")?.lastElementChild;
  const text = last?.firstChild?.nodeValue;
  if (text?.endsWith(waiter.marker)) {
    const done = waiter;
    waiter = null;
    done.resolve({ ms: performance.now() - startedAt, commits, records, renders });
  }
}

const observer = new MutationObserver((mutations) => {
  commits++;
  records += mutations.length;
  if (waiter) checkFinal();
});

// ---------------------------------------------------------------- the driver API
let driver: ClientDriver | undefined;

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const api = {
  register(client: ClientDriver) {
    driver = client;
    const app = document.getElementById("app")!;
    observer.observe(app, { subtree: true, childList: true, characterData: true, attributes: true });
  },
  get client() {
    return driver?.name;
  },
  mount(config: MountConfig) {
    driver!.mount(config);
  },
  unmount() {
    driver!.unmount();
  },
  /** Resolves once a socket is open, no transcript read is in flight and `expected` messages show (stable for 30 ms). */
  async ready(expected: number, timeoutMs = 20_000, stableMs = 30): Promise<void> {
    const settled = () => liveSockets().some((s) => s.readyState === NativeWebSocket.OPEN) && fetchesInFlight === 0 && messageCount() === expected;
    for (;;) {
      await until(settled, timeoutMs, `ready (${expected} messages; have ${messageCount()}, fetches ${fetchesInFlight}, live sockets ${liveSockets().length})`);
      await sleep(stableMs);
      if (settled()) return;
    }
  },
  /**
   * Starts a measured window: resets the counters, then runs `send` (a
   * message text) or, with `mount`, mounts the client. `final` resolves when
   * the last message ends with `marker`.
   */
  start(marker: string, action: { send?: string; mount?: MountConfig }) {
    commits = 0;
    records = 0;
    renders = 0;
    requestFrames.length = 0;
    let resolve!: (value: FinalText) => void;
    api.final = new Promise<FinalText>((r) => (resolve = r));
    waiter = { marker, resolve };
    startedAt = performance.now();
    if (action.mount) driver!.mount(action.mount);
    if (action.send !== undefined) driver!.send(action.send);
    checkFinal();
  },
  final: Promise.resolve({ ms: 0, commits: 0, records: 0, renders: 0 }) as Promise<FinalText>,
  /** UTF-8 sizes of the chat request frames sent in the window (then forgets them, before the heap is read). */
  requestBytes(): number[] {
    const encoder = new TextEncoder();
    const sizes = requestFrames.map((frame) => encoder.encode(frame).length);
    requestFrames.length = 0;
    return sizes;
  },
  /** The window's counters so far (also after the final text). */
  counters() {
    return { commits, records, renders };
  },
  countRender() {
    renders++;
  },
  messageCount,
  /** Closes every open native socket, as a network drop would (the client reconnects). */
  dropSockets(): number {
    const open = liveSockets().filter((s) => s.readyState === NativeWebSocket.OPEN);
    // 3000: a close PartySocket reconnects after (1008 and 4000-4999 are terminal for AgentClient).
    for (const socket of open) socket.close(3000, "bench drop");
    return open.length;
  },
  /** A socket created after the first `previous` ones is open. */
  async opened(previous: number, timeoutMs = 20_000): Promise<void> {
    await until(
      () => sockets.slice(previous).some((ref) => ref.deref()?.readyState === NativeWebSocket.OPEN),
      timeoutMs,
      "an open socket"
    );
  },
  /** After `dropSockets`: a new socket is open and the client settled (`expected` messages, no read in flight). */
  async reconnected(previous: number, expected: number, stableMs = 30): Promise<void> {
    await until(() => sockets.length > previous, 10_000, "a new socket");
    await api.ready(expected, 10_000, stableMs);
  },
  socketsCreated: () => sockets.length,
  /** Waits (up to `timeoutMs`) until every socket finished closing. */
  async socketsClosed(timeoutMs: number): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    while (liveSockets().length && performance.now() < deadline) await sleep(20);
    return liveSockets().length;
  },
  /** A pause on the native timer (not counted as a pending timer). */
  sleep,
  leakCounts
};

export type BenchApi = typeof api;

declare global {
  interface Window {
    bench: BenchApi;
  }
}

window.bench = api;

export const countRender = api.countRender;
export const register = api.register;
