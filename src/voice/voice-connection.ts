import {
  VoiceClient,
  type VoiceClientEvent,
  type VoiceClientEventMap,
  type VoiceClientOptions,
  type VoiceTransport,
  type VoiceTransportCloseInfo,
  WebSocketVoiceTransport
} from "agents/voice/client";
import { type MaybeRefOrGetter, type ShallowRef, markRaw, shallowRef, toValue, watch } from "vue";
import { onDispose } from "../lifecycle";

/** Listeners a composable keeps on its `VoiceClient`, by event. */
export type VoiceListeners = { [K in VoiceClientEvent]?: (data: VoiceClientEventMap[K]) => void };

/** How a composable builds and follows its voice client. */
export interface VoiceConnectionSpec {
  /** A string that changes exactly when a new client is needed (the address and tuning). */
  key: () => string;
  /** Whether a client should exist at all. */
  enabled: () => boolean;
  /** The client's options, read when a client is made. */
  clientOptions: () => VoiceClientOptions;
  /** Put the composable's refs back to their initial values (before a new client, and when disabled). */
  reset: () => void;
  listeners: VoiceListeners;
  /** Called when a client replaced another because the key changed. */
  onReplaced?: () => void;
  /** Called with each new client after it started connecting. */
  onCreated?: (client: VoiceClient) => void;
}

/**
 * The client's transport, silenced once the client disconnected. Binary audio
 * arrives as a Blob that `VoiceClient` reads asynchronously; audio read after
 * `disconnect()` would open a new AudioContext and play after the component
 * is gone. Here it is read the same way and dropped once released.
 */
class ReleasableTransport implements VoiceTransport {
  onopen: (() => void) | null = null;
  onclose: ((info?: VoiceTransportCloseInfo) => void) | null = null;
  onerror: ((error?: unknown) => void) | null = null;
  onmessage: ((data: string | ArrayBuffer | Blob) => void) | null = null;
  #released = false;

  readonly #inner: VoiceTransport;
  constructor(inner: VoiceTransport) {
    this.#inner = inner;
  }

  get connected(): boolean {
    return !this.#released && this.#inner.connected;
  }

  sendJSON(data: Record<string, unknown>): void {
    this.#inner.sendJSON(data);
  }

  sendBinary(data: ArrayBuffer): void {
    this.#inner.sendBinary(data);
  }

  connect(): void {
    const inner = this.#inner;
    // VoiceTransport's contract is callback properties, not events.
    /* oxlint-disable unicorn/prefer-add-event-listener */
    inner.onopen = () => {
      if (!this.#released) this.onopen?.();
    };
    inner.onclose = (info) => {
      if (!this.#released) this.onclose?.(info);
    };
    inner.onerror = (error) => {
      if (!this.#released) this.onerror?.(error);
    };
    inner.onmessage = (data) => {
      if (this.#released) return;
      if (typeof Blob !== "undefined" && data instanceof Blob) {
        void data.arrayBuffer().then((buffer) => {
          if (!this.#released) this.onmessage?.(buffer);
        });
        return;
      }
      this.onmessage?.(data);
    };
    /* oxlint-enable unicorn/prefer-add-event-listener */
    inner.connect();
  }

  disconnect(): void {
    this.#released = true;
    this.#inner.disconnect();
  }
}

function bind(client: VoiceClient, listeners: VoiceListeners, add: boolean): void {
  for (const [event, listener] of Object.entries(listeners) as Array<[VoiceClientEvent, (data: unknown) => void]>) {
    if (add) client.addEventListener(event, listener);
    else client.removeEventListener(event, listener);
  }
}

/** What {@link useVoiceConnection} gives a composable. */
export interface VoiceConnection {
  /** The live client, or `null` while disabled or after the scope ended. */
  client: Readonly<ShallowRef<VoiceClient | null>>;
  /**
   * Rule (start once connected): starts a call now when the socket is open;
   * before it opens, waits for it to open and starts then (asking twice while
   * waiting is one start). Settles when the call started, or, without
   * starting, when the wait was dropped. Nothing to call on (disabled, or
   * after the scope ended) resolves at once.
   */
  start(): Promise<void>;
  /** Drops a start still waiting for the socket (the promise resolves without a call). */
  cancelStart(): void;
}

/** A start asked for before the client's socket opened. */
interface PendingStart {
  client: VoiceClient;
  promise: Promise<void>;
  cancel: () => void;
}

/**
 * One `VoiceClient` at a time: made (and connected) now, replaced when the
 * key changes, dropped while disabled, and disconnected when the scope ends.
 * `disconnect()` ends the call, which stops the microphone's tracks, the
 * playback and the audio context. A start waiting for the socket is dropped
 * with the client it waits on.
 */
export function useVoiceConnection(spec: VoiceConnectionSpec): VoiceConnection {
  const client = shallowRef<VoiceClient | null>(null);
  let activeKey: string | null = null;
  let pending: PendingStart | null = null;

  const cancelStart = () => {
    const waiting = pending;
    pending = null;
    waiting?.cancel();
  };

  const start = (): Promise<void> => {
    const current = client.value;
    if (!current) return Promise.resolve();
    if (current.connected) return current.startCall();
    if (pending?.client === current) return pending.promise;
    cancelStart();
    const waiting: PendingStart = { client: current, promise: Promise.resolve(), cancel: () => {} };
    waiting.promise = new Promise<void>((resolve, reject) => {
      const stopWaiting = () => {
        current.removeEventListener("connectionchange", onConnectionChange);
        if (pending === waiting) pending = null;
      };
      const onConnectionChange = (connected: boolean) => {
        if (!connected) return;
        stopWaiting();
        current.startCall().then(resolve, reject);
      };
      waiting.cancel = () => {
        stopWaiting();
        resolve();
      };
      current.addEventListener("connectionchange", onConnectionChange);
    });
    pending = waiting;
    return waiting.promise;
  };

  const release = () => {
    cancelStart();
    const current = client.value;
    if (!current) return;
    client.value = null;
    bind(current, spec.listeners, false);
    current.disconnect();
  };

  const open = () => {
    release();
    spec.reset();
    if (!spec.enabled()) {
      activeKey = null;
      return;
    }
    const key = spec.key();
    const replaced = activeKey !== null && activeKey !== key;
    activeKey = key;
    if (replaced) spec.onReplaced?.();
    const options = spec.clientOptions();
    const transport = new ReleasableTransport(
      options.transport ??
        new WebSocketVoiceTransport({ agent: options.agent, name: options.name, host: options.host, query: options.query })
    );
    const next = markRaw(new VoiceClient({ ...options, transport }));
    bind(next, spec.listeners, true);
    client.value = next;
    next.connect();
    spec.onCreated?.(next);
  };

  watch(() => [spec.enabled(), spec.key()] as const, open, { immediate: true });
  onDispose(release);
  return { client, start, cancelStart };
}

/** A connection field read for the key (refs and getters unwrapped; missing is empty). */
export function keyPart(value: MaybeRefOrGetter<unknown>): string {
  const read = toValue(value);
  return read === undefined || read === null ? "" : typeof read === "object" ? JSON.stringify(read) : String(read);
}
