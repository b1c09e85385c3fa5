/**
 * The `Agent` half of the test agent: what every Cloudflare `Agent` does on
 * its sockets before the chat sees anything. On connect it names itself
 * (`cf_agent_identity`), sends its state (`cf_agent_state`) and its MCP
 * servers; it takes state from clients and broadcasts its own changes; and it
 * answers `@callable` RPC (`rpc` frames) from handlers the test supplies.
 */

/** What a `@callable` handler sees as `this`: the agent's state, server side. */
export interface TestAgentServer<State = unknown> {
  /** The state the agent holds now (the initial `state` until someone sets it). */
  readonly state: State;
  /** Sets the state and broadcasts it to the client, as `this.setState` does in an agent. */
  setState(state: State): void;
}

/** A function that takes any arguments (the handlers' own signatures are kept by inference). */
export type TestHandler = (...args: never) => unknown;

/**
 * The stream a streaming handler writes to, as `@callable({ streaming: true })`
 * methods write to upstream's `StreamingResponse`.
 */
export interface TestStream {
  /** Whether `end()` or `error()` closed the stream. */
  readonly isClosed: boolean;
  /** Sends one chunk (`onChunk` on the client); `false` once the stream is closed. */
  send(chunk: unknown): boolean;
  /** Ends the stream with an optional last value (`onDone`). */
  end(finalChunk?: unknown): boolean;
  /** Fails the stream with a message (`onError`, and the call rejects). */
  error(message: string): boolean;
}

/** The `Agent` options of `createTestAgent`: state and `@callable` methods. */
export interface TestAgentProtocolOptions<State = unknown, Methods extends Record<string, TestHandler> = Record<string, TestHandler>> {
  /** The agent's state at the start; sent on every connect. Without it, no state is sent until one is set. */
  state?: State;
  /**
   * The `@callable` methods: `call("add", [1, 2])` runs `methods.add(1, 2)`
   * and answers with what it returns (awaited); a throw rejects the call
   * with its message. `this` is the agent ({@link TestAgentServer}). A
   * method not listed is answered as the real agent answers it: `Method <name> does not exist`.
   */
  methods?: Methods & ThisType<TestAgentServer<State>>;
  /**
   * Streaming `@callable({ streaming: true })` methods: called with a
   * {@link TestStream} before the call's arguments. A throw before the
   * stream closed fails it with the message.
   */
  streaming?: Record<string, (stream: TestStream, ...args: never) => unknown> & ThisType<TestAgentServer<State>>;
  /** Refuse state from clients (`cf_agent_state_error` "Connection is readonly"), as a readonly connection does. */
  readonly?: boolean;
}

/** Where the protocol sends frames: to one connection, through the test agent's network. */
export interface ProtocolPort {
  /** Sends a frame to the client on connection `conn` (lost if that connection closed first). */
  send(conn: number, frame: Record<string, unknown>): void;
}

const RPC = "rpc";
const STATE = "cf_agent_state";

function isRpcRequest(frame: Record<string, unknown>): frame is { type: "rpc"; id: string; method: string; args: unknown[] } {
  return frame.type === RPC && typeof frame.id === "string" && typeof frame.method === "string" && Array.isArray(frame.args);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : "Unknown error occurred";
}

/** The agent's own protocol: identity, state and RPC. */
export class AgentProtocol<State> implements TestAgentServer<State> {
  state: State;
  /** Calls whose handler has not answered yet. */
  running = 0;
  #conn = 0;
  #open = false;

  constructor(
    private readonly options: TestAgentProtocolOptions<State>,
    private readonly port: ProtocolPort
  ) {
    this.state = options.state as State;
  }

  /** A connection opened: identity first (flagged when state follows), then the state, then the MCP servers. */
  connected(conn: number, identity: { agent: string; name: string }): void {
    this.#conn = conn;
    this.#open = true;
    const hasState = this.state !== undefined;
    this.port.send(conn, { type: "cf_agent_identity", name: identity.name, agent: identity.agent, ...(hasState ? { stateFollows: true } : {}) });
    if (hasState) this.port.send(conn, { type: STATE, state: this.state });
    this.port.send(conn, { type: "cf_agent_mcp_servers", mcp: { servers: {}, tools: [], prompts: [], resources: [] } });
  }

  disconnected(): void {
    this.#open = false;
  }

  setState(state: State): void {
    this.state = state;
    if (this.#open) this.port.send(this.#conn, { type: STATE, state });
  }

  /** Takes a frame of the agent's protocol; `false` for anything else (the chat's frames). */
  receive(conn: number, frame: Record<string, unknown>): boolean {
    if (frame.type === STATE && "state" in frame) {
      if (this.options.readonly) {
        this.port.send(conn, { type: "cf_agent_state_error", error: "Connection is readonly" });
      } else {
        // The client that set it already shows it: no broadcast back to it, and it is the only client.
        this.state = frame.state as State;
      }
      return true;
    }
    if (!isRpcRequest(frame)) return false;
    const { id, method, args } = frame;
    const plain = Object.hasOwn(this.options.methods ?? {}, method) ? this.options.methods?.[method] : undefined;
    const streaming = Object.hasOwn(this.options.streaming ?? {}, method) ? this.options.streaming?.[method] : undefined;
    if (typeof streaming === "function") {
      this.#stream(conn, id, streaming as (...all: unknown[]) => unknown, args);
      return true;
    }
    if (typeof plain !== "function") {
      this.port.send(conn, { type: RPC, id, success: false, error: `Method ${method} does not exist` });
      return true;
    }
    this.running++;
    new Promise<unknown>((resolve) => resolve((plain as (...all: unknown[]) => unknown).apply(this, args)))
      .then(
        (result) => this.port.send(conn, { type: RPC, id, success: true, result, done: true }),
        (error: unknown) => this.port.send(conn, { type: RPC, id, success: false, error: messageOf(error) })
      )
      .finally(() => this.running--);
    return true;
  }

  #stream(conn: number, id: string, handler: (...all: unknown[]) => unknown, args: unknown[]): void {
    let closed = false;
    const close = (frame: Record<string, unknown>) => {
      if (closed) return false;
      closed = true;
      this.port.send(conn, frame);
      return true;
    };
    const stream: TestStream = {
      get isClosed() {
        return closed;
      },
      send: (chunk) => {
        if (closed) {
          console.warn("[agents-vue/testing] A streaming method sent a chunk after its stream closed; it is dropped.");
          return false;
        }
        this.port.send(conn, { type: RPC, id, success: true, result: chunk, done: false });
        return true;
      },
      end: (finalChunk) => close({ type: RPC, id, success: true, result: finalChunk, done: true }),
      error: (message) => close({ type: RPC, id, success: false, error: message })
    };
    this.running++;
    new Promise<unknown>((resolve) => resolve(handler.apply(this, [stream, ...args])))
      .catch((error: unknown) => stream.error(error instanceof Error ? error.message : String(error)))
      .finally(() => this.running--);
  }
}

/** The agent and instance a socket address reaches (`/agents/<agent>/<name>`, the last `sub` step when there are some). */
export function identityOf(url: string): { agent: string; name: string } | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const root = parts.indexOf("agents");
  if (root < 0 || parts.length < root + 3) return null;
  let at = root + 1;
  while (parts[at + 2] === "sub" && parts.length >= at + 5) at += 3;
  return { agent: parts[at]!, name: parts[at + 1]! };
}
