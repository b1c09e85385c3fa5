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

/**
 * One `VoiceClient` at a time: made (and connected) now, replaced when the
 * key changes, dropped while disabled, and disconnected when the scope ends.
 * `disconnect()` ends the call, which stops the microphone's tracks, the
 * playback and the audio context.
 */
export function useVoiceConnection(spec: VoiceConnectionSpec): Readonly<ShallowRef<VoiceClient | null>> {
  const client = shallowRef<VoiceClient | null>(null);
  let activeKey: string | null = null;

  const release = () => {
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
  return client;
}

/** A connection field read for the key (refs and getters unwrapped; missing is empty). */
export function keyPart(value: MaybeRefOrGetter<unknown>): string {
  const read = toValue(value);
  return read === undefined || read === null ? "" : typeof read === "object" ? JSON.stringify(read) : String(read);
}
