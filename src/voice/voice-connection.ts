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

/** How long a start waits for the server to answer an `end_call` before it goes ahead anyway. */
const END_ANSWER_WAIT_MS = 2000;

/**
 * The client's transport, silenced once the client disconnected. Binary audio
 * arrives as a Blob that `VoiceClient` reads asynchronously; audio read after
 * `disconnect()` would open a new AudioContext and play after the component
 * is gone. Here it is read the same way and dropped once released.
 *
 * It also counts the `end_call`s the server has not answered yet (the server
 * answers each with `status: "idle"`): see the rule (start after the last
 * call ended) on {@link VoiceConnection.start}.
 */
class ReleasableTransport implements VoiceTransport {
  onopen: (() => void) | null = null;
  onclose: ((info?: VoiceTransportCloseInfo) => void) | null = null;
  onerror: ((error?: unknown) => void) | null = null;
  onmessage: ((data: string | ArrayBuffer | Blob) => void) | null = null;
  /** Called when no `end_call` is left unanswered. */
  afterEnd: (() => void) | null = null;
  #released = false;
  #unansweredEnds = 0;
  #answerDue: ReturnType<typeof setTimeout> | undefined;

  readonly #inner: VoiceTransport;
  constructor(inner: VoiceTransport) {
    this.#inner = inner;
  }

  get connected(): boolean {
    return !this.#released && this.#inner.connected;
  }

  /** Whether an `end_call` this client sent still waits for the server's answer. */
  get ending(): boolean {
    return this.#unansweredEnds > 0;
  }

  sendJSON(data: Record<string, unknown>): void {
    if (data.type === "end_call" && this.connected) {
      this.#unansweredEnds++;
      clearTimeout(this.#answerDue);
      // A server that never answers must not hold the next call back for ever.
      this.#answerDue = setTimeout(() => this.#ended(this.#unansweredEnds), END_ANSWER_WAIT_MS);
    }
    this.#inner.sendJSON(data);
  }

  #ended(answers: number): void {
    if (!this.#unansweredEnds) return;
    this.#unansweredEnds = Math.max(0, this.#unansweredEnds - answers);
    if (this.#unansweredEnds) return;
    clearTimeout(this.#answerDue);
    this.afterEnd?.();
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
      // The server forgets the calls of a closed connection: nothing is left to answer.
      this.#ended(this.#unansweredEnds);
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
      if (this.#unansweredEnds && typeof data === "string" && isIdleStatus(data)) this.#ended(1);
      this.onmessage?.(data);
    };
    /* oxlint-enable unicorn/prefer-add-event-listener */
    inner.connect();
  }

  disconnect(): void {
    this.#released = true;
    clearTimeout(this.#answerDue);
    this.#inner.disconnect();
  }
}

/** Whether a text frame is the server's `{ type: "status", status: "idle" }`. */
function isIdleStatus(data: string): boolean {
  if (!data.includes('"idle"')) return false;
  try {
    const frame = JSON.parse(data) as { type?: unknown; status?: unknown };
    return frame.type === "status" && frame.status === "idle";
  } catch {
    return false;
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
   *
   * Rule (start after the last call ended): a start right after a stop waits
   * until the server answered the stop's `end_call` (at most
   * `END_ANSWER_WAIT_MS`). Until then the server still sends frames of the
   * call that ended (its `status: "listening"` after a transcript, then the
   * answer, `status: "idle"`); `VoiceClient` would take them for the new
   * call's and end it at once, leaving the server listening to a client whose
   * microphone is off.
   */
  start(): Promise<void>;
  /** Drops a start still waiting for the socket (the promise resolves without a call). */
  cancelStart(): void;
}

/** A start asked for before the client's socket opened or its last call ended. */
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
  let transport: ReleasableTransport | null = null;
  let activeKey: string | null = null;
  let pending: PendingStart | null = null;

  const cancelStart = () => {
    const waiting = pending;
    pending = null;
    waiting?.cancel();
  };

  const start = (): Promise<void> => {
    const current = client.value;
    const lane = transport;
    if (!current || !lane) return Promise.resolve();
    const ready = () => current.connected && !lane.ending;
    if (ready()) return current.startCall();
    if (pending?.client === current) return pending.promise;
    cancelStart();
    const waiting: PendingStart = { client: current, promise: Promise.resolve(), cancel: () => {} };
    waiting.promise = new Promise<void>((resolve, reject) => {
      const stopWaiting = () => {
        current.removeEventListener("connectionchange", check);
        lane.afterEnd = null;
        if (pending === waiting) pending = null;
      };
      const check = () => {
        if (!ready()) return;
        stopWaiting();
        current.startCall().then(resolve, reject);
      };
      waiting.cancel = () => {
        stopWaiting();
        resolve();
      };
      current.addEventListener("connectionchange", check);
      lane.afterEnd = check;
    });
    pending = waiting;
    return waiting.promise;
  };

  const release = () => {
    cancelStart();
    const current = client.value;
    if (!current) return;
    client.value = null;
    transport = null;
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
    transport = new ReleasableTransport(
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
