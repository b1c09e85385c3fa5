/**
 * Counts the browser resources the composables hold, for the tests that
 * prove unmounting and switching release them: WebSockets not closed,
 * microphone tracks not ended, AudioContexts not closed, event listeners the
 * library's own code added and did not remove, and timers still pending.
 *
 * `trackResources()` patches the globals (WebSocket, AudioContext,
 * getUserMedia, EventTarget listeners, timers); `restore()` undoes it. Only
 * what is created after `trackResources()` is counted.
 */

interface TimerEntry {
  kind: "timeout" | "interval";
  stack: string;
}

interface ListenerEntry {
  target: EventTarget;
  type: string;
  listener: EventListenerOrEventListenerObject;
  capture: boolean;
  stack: string;
}

/** What is still held, with where each timer and listener was created. */
export interface HeldResources {
  sockets: number;
  tracks: number;
  audioContexts: number;
  listeners: string[];
  timers: string[];
}

/** Where each AudioContext still open was created (for a failure message). */
export type OpenAudioContexts = string[];

export interface ResourceTracker {
  /** Resources created since tracking began and not yet released. */
  held(): HeldResources;
  /** How many of each were created since tracking began. */
  created(): { sockets: number; tracks: number; audioContexts: number };
  /** Where each AudioContext still open was created. */
  openAudioContexts(): OpenAudioContexts;
  restore(): void;
}

/** The library's own source (served by vite at `/src/...`), not its dependencies or the tests. */
const OWN_CODE = /\/src\/[^\s)]+\.ts/;

function captureOf(options?: boolean | EventListenerOptions): boolean {
  return typeof options === "boolean" ? options : !!options?.capture;
}

function callerStack(): string {
  // Frames: Error, this helper, the patched function, then its caller.
  return (new Error().stack ?? "").split("\n").slice(3, 9).join("\n");
}

function isOwnCaller(stack: string): boolean {
  return OWN_CODE.test(stack.split("\n")[0] ?? "");
}

/** Timers the test itself or the test runner started (vi.waitFor, mounting) are not counted. */
function isTestTimer(stack: string): boolean {
  return /\/test\/|@vitest|vitest\/dist|node_modules\/vitest\//.test(stack);
}

/** An object with its own listener registry (e.g. `VoiceClient`), counted like an EventTarget. */
export interface Emitter {
  addEventListener(...args: never[]): void;
  removeEventListener(...args: never[]): void;
}

type EmitterMethod = (this: Emitter, event: string, listener: unknown) => void;

/**
 * Starts counting. `emitters` are prototypes of classes with their own
 * `addEventListener`/`removeEventListener` (not EventTarget), whose
 * listeners the library adds are counted too.
 */
export function trackResources(options: { emitters?: Emitter[] } = {}): ResourceTracker {
  const sockets = new Set<WebSocket>();
  const tracks = new Set<MediaStreamTrack>();
  const contexts = new Map<AudioContext, string>();
  // Timer ids, whatever type the typings give them (a number in the browser).
  type TimerId = ReturnType<typeof setTimeout>;
  const timers = new Map<TimerId, TimerEntry>();
  const listeners: ListenerEntry[] = [];

  const NativeWebSocket = globalThis.WebSocket;
  class TrackedWebSocket extends NativeWebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      sockets.add(this);
    }
  }
  globalThis.WebSocket = TrackedWebSocket;

  const NativeAudioContext = globalThis.AudioContext;
  class TrackedAudioContext extends NativeAudioContext {
    constructor(options?: AudioContextOptions) {
      super(options);
      contexts.set(this, (new Error().stack ?? "").split("\n").slice(2, 8).join("\n"));
    }
  }
  globalThis.AudioContext = TrackedAudioContext;

  const devices = navigator.mediaDevices;
  const nativeGetUserMedia = devices.getUserMedia;
  devices.getUserMedia = async (constraints) => {
    const stream = await nativeGetUserMedia.call(devices, constraints);
    for (const track of stream.getTracks()) tracks.add(track);
    return stream;
  };

  const nativeSetTimeout = globalThis.setTimeout;
  const nativeClearTimeout = globalThis.clearTimeout;
  const nativeSetInterval = globalThis.setInterval;
  const nativeClearInterval = globalThis.clearInterval;
  globalThis.setTimeout = ((handler: TimerHandler, delay?: number, ...args: unknown[]): TimerId => {
    const stack = callerStack();
    const id = nativeSetTimeout(
      (...callbackArgs: unknown[]) => {
        timers.delete(id);
        if (typeof handler === "function") (handler as (...a: unknown[]) => void)(...callbackArgs);
      },
      delay,
      ...args
    );
    if (!isTestTimer(stack)) timers.set(id, { kind: "timeout", stack });
    return id;
  }) as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((id?: TimerId) => {
    if (id !== undefined) timers.delete(id);
    nativeClearTimeout(id);
  }) as typeof clearTimeout;
  globalThis.setInterval = ((handler: TimerHandler, delay?: number, ...args: unknown[]): TimerId => {
    const stack = callerStack();
    const id = nativeSetInterval(handler as () => void, delay, ...args) as unknown as TimerId;
    if (!isTestTimer(stack)) timers.set(id, { kind: "interval", stack });
    return id;
  }) as unknown as typeof setInterval;
  globalThis.clearInterval = ((id?: TimerId) => {
    if (id !== undefined) timers.delete(id);
    nativeClearInterval(id);
  }) as typeof clearInterval;

  const proto = EventTarget.prototype;
  const nativeAdd = proto.addEventListener;
  const nativeRemove = proto.removeEventListener;
  const indexOf = (target: EventTarget, type: string, listener: EventListenerOrEventListenerObject, capture: boolean) =>
    listeners.findIndex((e) => e.target === target && e.type === type && e.listener === listener && e.capture === capture);
  proto.addEventListener = function (
    this: EventTarget,
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions
  ) {
    nativeAdd.call(this, type, listener, options);
    const stack = callerStack();
    if (!listener || !isOwnCaller(stack)) return;
    const capture = captureOf(options);
    if (indexOf(this, type, listener, capture) !== -1) return;
    const entry: ListenerEntry = { target: this, type, listener, capture, stack };
    listeners.push(entry);
    const signal = typeof options === "object" ? options.signal : undefined;
    const drop = () => {
      const index = listeners.indexOf(entry);
      if (index !== -1) listeners.splice(index, 1);
    };
    if (signal?.aborted) drop();
    else signal?.addEventListener("abort", drop, { once: true });
    if (typeof options === "object" && options.once) {
      nativeAdd.call(this, type, drop, { once: true });
    }
  };
  proto.removeEventListener = function (
    this: EventTarget,
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | EventListenerOptions
  ) {
    nativeRemove.call(this, type, listener, options);
    if (!listener) return;
    const index = indexOf(this, type, listener, captureOf(options));
    if (index !== -1) listeners.splice(index, 1);
  };

  const emitterRestores = (options.emitters ?? []).map((emitter) => {
    const add = emitter.addEventListener as EmitterMethod;
    const remove = emitter.removeEventListener as EmitterMethod;
    const patchedAdd: EmitterMethod = function (this: Emitter, event, listener) {
      add.call(this, event, listener);
      const stack = callerStack();
      if (!isOwnCaller(stack)) return;
      const key = listener as unknown as EventListenerOrEventListenerObject;
      if (indexOf(this as unknown as EventTarget, event, key, false) === -1) {
        listeners.push({ target: this as unknown as EventTarget, type: event, listener: key, capture: false, stack });
      }
    };
    const patchedRemove: EmitterMethod = function (this: Emitter, event, listener) {
      remove.call(this, event, listener);
      const index = indexOf(this as unknown as EventTarget, event, listener as unknown as EventListenerOrEventListenerObject, false);
      if (index !== -1) listeners.splice(index, 1);
    };
    emitter.addEventListener = patchedAdd as Emitter["addEventListener"];
    emitter.removeEventListener = patchedRemove as Emitter["removeEventListener"];
    return () => {
      emitter.addEventListener = add as Emitter["addEventListener"];
      emitter.removeEventListener = remove as Emitter["removeEventListener"];
    };
  });

  return {
    held: () => ({
      sockets: [...sockets].filter((socket) => socket.readyState !== NativeWebSocket.CLOSED).length,
      tracks: [...tracks].filter((track) => track.readyState !== "ended").length,
      audioContexts: [...contexts.keys()].filter((context) => context.state !== "closed").length,
      listeners: listeners.map((entry) => `${entry.type} on ${entry.target.constructor.name}\n${entry.stack}`),
      timers: [...timers.values()].map((entry) => `${entry.kind}\n${entry.stack}`)
    }),
    openAudioContexts: () => [...contexts].filter(([context]) => context.state !== "closed").map(([, stack]) => stack),
    created: () => ({ sockets: sockets.size, tracks: tracks.size, audioContexts: contexts.size }),
    restore: () => {
      globalThis.WebSocket = NativeWebSocket;
      globalThis.AudioContext = NativeAudioContext;
      devices.getUserMedia = nativeGetUserMedia;
      globalThis.setTimeout = nativeSetTimeout;
      globalThis.clearTimeout = nativeClearTimeout;
      globalThis.setInterval = nativeSetInterval;
      globalThis.clearInterval = nativeClearInterval;
      proto.addEventListener = nativeAdd;
      proto.removeEventListener = nativeRemove;
      for (const restore of emitterRestores) restore();
    }
  };
}
