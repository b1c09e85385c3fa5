import type { AgentSocket } from "../core/connection";

/**
 * The client's ends of the test agent's one connection: the `socket` a chat
 * is handed, a `WebSocket` constructor for `useAgent` (PartySocket opens its
 * sockets through it), and the `fetch` wrapper that answers transcript reads.
 */

type Listener = (event: MessageEvent) => void;

/** What a socket needs of the test agent. */
export interface SocketOwner {
  /** A frame from the client; `false` when the socket is closed (the frame waits for it to open). */
  fromClient(data: string): boolean;
  drop(): void;
  reconnect(): Promise<void>;
}

/** What the `WebSocket` constructor needs of the test agent. */
export interface WebSocketOwner {
  /** The socket whose events the WebSocket follows and through which it sends. */
  readonly socket: TestSocket;
  /** A new WebSocket at `url` takes over the connection (the one before closes) and opens it. */
  attach(face: object, url: string): void;
  /** The WebSocket `face` closed: the connection drops if it is still that WebSocket's. */
  detach(face: object): void;
}

/** The socket the chat holds: frames go to the simulated server, frames from it come as `message` events. */
export class TestSocket implements AgentSocket {
  readyState = 0;
  connectionError: Error | null = null;
  readonly _pkurl: string;
  readonly _pk: string;
  readonly #listeners = new Map<string, Set<Listener>>();

  constructor(
    private readonly owner: SocketOwner,
    readonly agent: string,
    readonly name: string,
    host: string
  ) {
    this._pkurl = `ws://${host}/agents/${agent}/${name}`;
    this._pk = `${agent}-${name}`;
  }

  send(data: string): boolean {
    return this.owner.fromClient(data);
  }

  addEventListener(type: string, listener: Listener, options?: { signal?: AbortSignal }): void {
    if (options?.signal?.aborted) return;
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(listener);
    options?.signal?.addEventListener("abort", () => this.removeEventListener(type, listener), { once: true });
  }

  removeEventListener(type: string, listener: Listener): void {
    this.#listeners.get(type)?.delete(listener);
  }

  /** Closing the socket (an app that owns it): closed for good. */
  close(): void {
    this.owner.drop();
  }

  /** PartySocket's reconnect: closes and opens again. */
  reconnect(): void {
    this.owner.drop();
    void this.owner.reconnect();
  }

  emit(type: string, event: Event): void {
    for (const listener of Array.from(this.#listeners.get(type) ?? [])) listener(event as MessageEvent);
  }
}

/**
 * A `WebSocket` constructor whose sockets reach the test agent. PartySocket
 * (under `useAgent`'s `AgentClient`) creates one per connection attempt; the
 * newest one is the agent's connection.
 */
export function testWebSocket(owner: WebSocketOwner): typeof WebSocket {
  class TestWebSocket extends EventTarget {
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    readonly CONNECTING = 0;
    readonly OPEN = 1;
    readonly CLOSING = 2;
    readonly CLOSED = 3;
    readonly url: string;
    readyState = 0;
    binaryType: BinaryType = "blob";
    readonly bufferedAmount = 0;
    readonly extensions = "";
    readonly protocol = "";
    onopen: ((event: Event) => unknown) | null = null;
    onmessage: ((event: MessageEvent) => unknown) | null = null;
    onclose: ((event: CloseEvent) => unknown) | null = null;
    onerror: ((event: Event) => unknown) | null = null;
    readonly #following = new AbortController();

    constructor(url: string | URL, _protocols?: string | string[]) {
      super();
      this.url = String(url);
      owner.attach(this, this.url);
      const signal = this.#following.signal;
      owner.socket.addEventListener(
        "open",
        () => {
          this.readyState = 1;
          this.#emit("open", new Event("open"));
        },
        { signal }
      );
      owner.socket.addEventListener(
        "message",
        (event) => {
          if (this.readyState === 1) this.#emit("message", new MessageEvent("message", { data: event.data }));
        },
        { signal }
      );
      owner.socket.addEventListener(
        "close",
        (event) => {
          this.readyState = 3;
          this.#following.abort();
          const { code, reason, wasClean } = event as unknown as CloseEvent;
          this.#emit("close", Object.assign(new Event("close"), { code, reason, wasClean }));
        },
        { signal }
      );
    }

    send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
      if (this.readyState !== 1) throw new Error("[agents-vue/testing] send() on a test WebSocket that is not open.");
      if (typeof data !== "string") {
        console.warn("[agents-vue/testing] The test agent takes text frames only; a binary frame was dropped.");
        return;
      }
      owner.socket.send(data);
    }

    close(_code?: number, _reason?: string): void {
      if (this.readyState >= 2) return;
      this.readyState = 3;
      this.#following.abort();
      owner.detach(this);
    }

    #emit(type: "open" | "message" | "close", event: Event): void {
      const handler = this[`on${type}`] as ((event: Event) => unknown) | null;
      handler?.call(this, event);
      this.dispatchEvent(event);
    }
  }
  return TestWebSocket as unknown as typeof WebSocket;
}

/** Answers transcript reads for the agents at these HTTP addresses. */
export interface ReadAnswerer {
  fetch: typeof fetch;
}

const intercepting = new Map<string, ReadAnswerer>();
let wrappedFetch: typeof fetch | null = null;

/** Answers `GET <address>/get-messages` through `globalThis.fetch` from `agent` (until {@link releaseFetch}). */
export function interceptFetch(agent: ReadAnswerer, address: string): void {
  intercepting.set(address, agent);
  if (wrappedFetch) return;
  const original = globalThis.fetch;
  wrappedFetch = original;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const owner = intercepting.get(url.replace(/\/get-messages(\?.*)?$/, ""));
    return owner ? owner.fetch(input, init) : original(input, init);
  }) as typeof fetch;
}

/** Stops answering for `agent` (every address); unwraps `fetch` once no agent is left. */
export function releaseFetch(agent: ReadAnswerer): void {
  for (const [address, owner] of intercepting) if (owner === agent) intercepting.delete(address);
  if (intercepting.size === 0 && wrappedFetch) {
    globalThis.fetch = wrappedFetch;
    wrappedFetch = null;
  }
}

/** The HTTP address of a socket URL (`ws:` → `http:`, no query). */
export function httpAddress(url: string): string {
  try {
    const parsed = new URL(url.replace(/^ws(s?):\/\//, "http$1://"));
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}
