import type { UIMessage } from "ai";
import { markRaw } from "vue";
import type { AgentSocket } from "../core/connection";
import { withheldPublications } from "../core/publications";
import { AgentProtocol, type TestAgentProtocolOptions, type TestHandler, identityOf } from "./agent-protocol";
import { type OtherTab, otherTab } from "./other-tab";
import { type Reply, replyChunks } from "./replies";
import { SimAgent } from "./sim-agent";
import { type Down, type M, type WorldPort, clone } from "./sim-port";
import { TestSocket, httpAddress, interceptFetch, releaseFetch, testWebSocket } from "./test-socket";

/** What a reply function is told about the turn it answers. */
export interface TestTurn {
  /** The request's id (for a continuation, an id of the server's). */
  requestId: string;
  /** The turn continues the last assistant message after a tool output or approval. */
  continuation: boolean;
  /** The transcript the server holds when the turn is queued (the request's messages included). */
  messages: UIMessage[];
}

/**
 * Options of {@link createTestAgent}: the chat's replies and pace, and the
 * `Agent`'s `state` and `@callable` `methods` (for `useAgent`).
 */
export interface TestAgentOptions<State = unknown, Methods extends Record<string, TestHandler> = Record<string, TestHandler>>
  extends TestAgentProtocolOptions<State, Methods> {
  /** The agent's URL segment (`agents/<agent>/<name>`). Default `"chat-agent"`. */
  agent?: string;
  /** The instance name. Default: a fresh `test-<n>` per agent. */
  name?: string;
  /** The host in the socket's address (nothing connects to it). Default `"agents.test"`. */
  host?: string;
  /** Replies for the coming turns, in order: one per turn (a continuation is a turn). */
  replies?: Reply[];
  /** The reply for a turn once `replies` ran out. Default: the text `"OK"`. */
  reply?: (turn: TestTurn) => Reply;
  /** The transcript the server holds at the start (what the first read returns). */
  messages?: UIMessage[];
  /**
   * The agent runs the ordered server half, `orderTranscript` from
   * `agents-vue/server` (exact sync), as an agent that calls it in its
   * constructor does: every transcript frame carries a version, a new
   * socket gets the stored transcript first (`connect: true`), snapshot
   * requests are answered, and a client's `setMessages` list (also
   * {@link OtherTab.setMessages}) replaces the stored transcript. Default
   * `false`: a stock `AIChatAgent`.
   */
  ordered?: boolean;
  /**
   * How fast replies stream: milliseconds between two chunks (default `0`:
   * one chunk per task), or `"manual"`: a chunk goes out only on
   * {@link TestAgent.advance}. Starting and ending a turn, stops and
   * failures never wait.
   */
  pace?: number | "manual";
  /** Milliseconds each frame and each transcript read takes on the way. Default `0` (the next task). */
  latency?: number;
  /** Open the socket at once (in the next task). Default `true`; otherwise call {@link TestAgent.reconnect}. */
  connect?: boolean;
  /**
   * Answer the chat's transcript reads (`GET <address>/get-messages`) by
   * wrapping `globalThis.fetch` while the agent lives (other URLs go to the
   * fetch it wrapped). Default `true`. With `false`, pass
   * {@link TestAgent.fetch} where your code fetches, or set
   * `getInitialMessages: agent.getInitialMessages` on the chat.
   */
  interceptFetch?: boolean;
}

/** A frame the client sent, as the agent received it. */
export type ReceivedFrame = Record<string, unknown> & { type: string };

/**
 * An in-memory Cloudflare `AIChatAgent` for tests: pass {@link TestAgent.socket}
 * as `agent` to `useAgentChat`, or {@link TestAgent.WebSocket} as `WebSocket`
 * to `useAgent`. It speaks the `cf_agent_*` protocol (the project's property
 * test proves the chat against the same simulation) and answers transcript
 * reads; nothing leaves the process. One client at a time.
 */
export interface TestAgent<State = unknown> {
  /** The connection to hand the chat: `useAgentChat({ agent: testAgent.socket })`. */
  readonly socket: AgentSocket;
  /**
   * A `WebSocket` constructor whose sockets reach this agent, for
   * `useAgent({ agent: "MyAgent", WebSocket: testAgent.WebSocket })`. Any
   * address works: the identity names the agent and instance of the URL, and
   * that address answers transcript reads too, so `useAgentChat({ agent })`
   * on the same `useAgent` chats with this agent. A new socket takes over the
   * connection (the agent has one client at a time). After {@link TestAgent.drop}
   * the client reconnects on its own, after PartySocket's delay (set
   * `minReconnectionDelay` on `useAgent` to shorten it).
   */
  readonly WebSocket: typeof WebSocket;
  /** The agent's state now (from `state`, the client's `setState`, or {@link TestAgent.setState}). */
  readonly state: State;
  /** Sets the agent's state on the server and broadcasts it to the client (`cf_agent_state`). */
  setState(state: State): void;
  /** The agent's HTTP address (`http://<host>/agents/<agent>/<name>`). */
  readonly url: string;
  /** A copy of the transcript the server holds now. */
  readonly transcript: UIMessage[];
  /** Every frame the client sent, in order. */
  readonly received: readonly ReceivedFrame[];
  /** Every frame delivered to the client, in order. */
  readonly delivered: readonly ReceivedFrame[];
  /** How many transcript reads (`/get-messages`) the agent answered. */
  readonly reads: number;
  /** Whether the socket is open. */
  readonly connected: boolean;
  /** Whether a turn is streaming on the server. */
  readonly streaming: boolean;
  /** Another client of the same agent. */
  readonly otherTab: OtherTab;
  /** Queues replies after the ones not used yet. */
  script(...replies: Reply[]): void;
  /**
   * With `pace: "manual"`: waits for a turn to stream (a request may still
   * be on its way), lets its next `chunks` chunks go out (default 1;
   * `"turn"`: all the rest of it) and resolves once things are still again
   * (see {@link settled}): the chat shows what those chunks brought, whatever
   * its `throttle`.
   */
  advance(chunks?: number | "turn", timeoutMs?: number): Promise<void>;
  /** Fails the running turn now (thrown on the server; one error frame ends it). */
  fail(): void;
  /** The network drops: the socket closes (code 1006) and frames on their way are lost. Turns keep running on the server. */
  drop(): void;
  /** Opens the socket again (a dropped one reconnects; the server offers a running stream to resume). Resolves once it is open. */
  reconnect(): Promise<void>;
  /**
   * Resolves once nothing moves any more: no frame on its way, no read
   * unanswered, no turn queued or streaming (with `pace: "manual"`, a
   * streaming turn waiting for {@link advance} counts as still), and no chat
   * holding an update back for its `throttle` window, so what the chat
   * received is on screen. Rejects after `timeoutMs` (default 5000) naming
   * what is still pending.
   */
  settled(timeoutMs?: number): Promise<void>;
  /** A `fetch` that answers `GET <url>/get-messages` from the stored transcript (and 404 for anything else). */
  readonly fetch: typeof fetch;
  /** A loader for `useAgentChat`'s `getInitialMessages` that reads the stored transcript. */
  readonly getInitialMessages: () => Promise<UIMessage[]>;
  /** Stops the agent's timers, closes the socket and unwraps `fetch`. */
  dispose(): void;
}

let agents = 0;

class TestAgentImpl<State> implements TestAgent<State>, WorldPort {
  readonly socket: TestSocket;
  readonly WebSocket: typeof WebSocket;
  readonly url: string;
  readonly received: ReceivedFrame[] = [];
  readonly delivered: ReceivedFrame[] = [];
  reads = 0;
  readonly otherTab: OtherTab;
  readonly #server: SimAgent;
  readonly #agent: AgentProtocol<State>;
  /** The WebSocket that holds the connection (when `useAgent` opened it), and the agent and instance its URL names. */
  #face: object | null = null;
  #identity: { agent: string; name: string };
  readonly #down: Down[] = [];
  /** Frames the client sent while the socket was closed: sent once it opens (as PartySocket does). */
  readonly #buffered: string[] = [];
  /** Frames and read answers on their way, with when they arrive. */
  readonly #inFlight = new Set<ReturnType<typeof setTimeout>>();
  /** The HTTP addresses whose transcript reads this agent answers. */
  readonly #addresses = new Set<string>();
  readonly #replies: Reply[];
  readonly #options: TestAgentOptions<State>;
  #open = false;
  #conn = 0;
  #disposed = false;
  #pump: ReturnType<typeof setTimeout> | null = null;
  #chunkDue: ReturnType<typeof setTimeout> | null = null;
  /** Chunks `advance()` released and not streamed yet, and the turn they belong to. */
  #released = 0;
  #releasedFor: unknown = null;

  constructor(options: TestAgentOptions<State>) {
    this.#options = options;
    this.#replies = [...(options.replies ?? [])];
    const agent = options.agent ?? "chat-agent";
    const name = options.name ?? `test-${++agents}`;
    const host = options.host ?? "agents.test";
    this.socket = markRaw(new TestSocket(this, agent, name, host));
    this.url = `http://${host}/agents/${agent}/${name}`;
    this.#server = new SimAgent(this, this.#down, { ordered: options.ordered === true });
    this.#identity = { agent, name };
    this.#agent = new AgentProtocol(options, { send: (conn, frame) => this.#toClient(conn, frame) });
    this.WebSocket = testWebSocket({ socket: this.socket, attach: (face, at) => this.#attach(face, at), detach: (face) => this.#face === face && this.drop() });
    if (options.messages) {
      this.#server.stored = clone(options.messages);
      for (const message of options.messages) this.#server.everHeld.add(message.id);
    }
    this.otherTab = otherTab(this.#server, () => this.#schedule());
    this.#addresses.add(this.url);
    if (options.interceptFetch !== false) interceptFetch(this, this.url);
    if (options.connect !== false) this.#later(() => this.#openSocket());
  }

  // ── The simulated server's port ──

  coin(): boolean {
    return false;
  }

  nextReplyShape(): number {
    return 0;
  }

  replyFor(turn: { requestId: string; replyId: string; continuation: boolean; messages: readonly M[]; newCallId: () => string }) {
    const reply = this.#replies.shift() ?? this.#options.reply?.({ requestId: turn.requestId, continuation: turn.continuation, messages: clone([...turn.messages]) }) ?? "OK";
    return replyChunks(reply, turn);
  }

  // ── State ──

  get transcript(): UIMessage[] {
    return clone(this.#server.stored);
  }

  get connected(): boolean {
    return this.#open;
  }

  get streaming(): boolean {
    return this.#server.running?.started === true;
  }

  get state(): State {
    return this.#agent.state;
  }

  setState(state: State): void {
    this.#agent.setState(state);
  }

  script(...replies: Reply[]): void {
    this.#replies.push(...replies);
  }

  // ── The network ──

  /** A frame from the client: taken by the server after the latency, in order. */
  fromClient(data: string): boolean {
    if (!this.#open) {
      this.#buffered.push(data);
      return false;
    }
    this.#up(data, this.#conn);
    return true;
  }

  #up(data: string, conn: number): void {
    let frame: ReceivedFrame;
    try {
      frame = JSON.parse(data) as ReceivedFrame;
    } catch {
      console.warn(`[agents-vue/testing] The client sent a frame that is not JSON: ${data.slice(0, 80)}`);
      return;
    }
    this.received.push(frame);
    this.#later(() => {
      try {
        if (!this.#agent.receive(conn, frame)) this.#server.receive(conn, frame);
      } catch (error) {
        console.warn(`[agents-vue/testing] The test agent cannot take this frame: ${String(error instanceof Error ? error.message : error)}`);
      }
      this.#schedule();
    });
  }

  /** Runs `run` once the latency passed (in the next task at the least). */
  #later(run: () => void, ms = this.#options.latency ?? 0): void {
    if (this.#disposed) return;
    const timer = setTimeout(() => {
      this.#inFlight.delete(timer);
      if (!this.#disposed) run();
    }, ms);
    this.#inFlight.add(timer);
  }

  /** Delivers the frames the server sent, one per task, and moves the turns on. */
  #schedule(): void {
    if (this.#pump !== null || this.#disposed) return;
    this.#pump = setTimeout(() => {
      this.#pump = null;
      this.#step();
    }, 0);
  }

  #step(): void {
    const next = this.#down.shift();
    if (next) {
      if (next.conn === this.#conn && this.#open) this.#deliver(next.frame);
      this.#schedule();
      return;
    }
    if (this.#moveTurn()) this.#schedule();
  }

  #deliver(frame: Record<string, unknown>): void {
    this.delivered.push(frame as ReceivedFrame);
    this.socket.emit("message", new MessageEvent("message", { data: JSON.stringify(frame) }));
  }

  /** Whether the running turn's next step streams a chunk (the step `pace` times). */
  #chunkNext(): boolean {
    const turn = this.#server.running;
    if (!turn?.started || turn.abort || turn.fail) return false;
    if (turn.failAt && turn.next >= turn.failAt.after) return false;
    return turn.next < turn.plan.length;
  }

  /** One step of the turns when it is due: true when it stepped (more may follow at once). */
  #moveTurn(): boolean {
    const server = this.#server;
    if (!server.running && server.queue.length === 0) return false;
    if (!this.#chunkNext()) return server.step();
    const pace = this.#options.pace ?? 0;
    if (pace === "manual") {
      if (this.#releasedFor !== server.running) this.#released = 0;
      if (this.#released === 0) return false;
      this.#released--;
      return server.step();
    }
    if (this.#chunkDue === null) {
      this.#chunkDue = setTimeout(() => {
        this.#chunkDue = null;
        if (this.#disposed) return;
        if (this.#chunkNext()) server.step();
        this.#schedule();
      }, pace);
    }
    return false;
  }

  /** A frame of the `Agent` protocol to connection `conn`, in order with the chat's. */
  #toClient(conn: number, frame: Record<string, unknown>): void {
    const server = this.#server;
    this.#down.push({ conn, frame: clone(frame), taken: { ...server.taken }, whole: false });
    this.#schedule();
  }

  /** A WebSocket of {@link WebSocket} takes over the connection: the one open before closes, and it opens at its address. */
  #attach(face: object, url: string): void {
    this.drop();
    this.#face = face;
    this.#identity = identityOf(url) ?? this.#identity;
    this.#addresses.add(httpAddress(url));
    if (this.#options.interceptFetch !== false) interceptFetch(this, httpAddress(url));
    void this.reconnect();
  }

  #openSocket(): void {
    if (this.#open || this.#disposed) return;
    this.#open = true;
    this.#conn++;
    // The Agent's connect frames go to useAgent's sockets; a chat handed `socket` gets the chat's frames only (as it always did).
    if (this.#face) this.#agent.connected(this.#conn, this.#identity);
    this.#server.connected(this.#conn);
    for (const data of this.#buffered.splice(0)) this.#up(data, this.#conn);
    this.socket.readyState = 1;
    this.socket.emit("open", new Event("open"));
    this.#schedule();
  }

  drop(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#server.disconnected();
    this.#agent.disconnected();
    this.#down.length = 0;
    this.socket.readyState = 3;
    const event = new Event("close") as Event & { code: number; reason: string; wasClean: boolean };
    Object.assign(event, { code: 1006, reason: "", wasClean: false });
    this.socket.emit("close", event);
    this.#schedule();
  }

  reconnect(): Promise<void> {
    return new Promise((resolve) => {
      this.#later(() => {
        this.#openSocket();
        resolve();
      });
    });
  }

  fail(): void {
    const turn = this.#server.running;
    if (turn?.started) turn.fail = "thrown";
    this.#schedule();
  }

  async advance(chunks: number | "turn" = 1, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#chunkNext()) {
      if (Date.now() > deadline) throw new Error(`[agents-vue/testing] advance(): no turn streamed within ${timeoutMs} ms.`);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    this.#releasedFor = this.#server.running;
    this.#released = chunks === "turn" ? Number.POSITIVE_INFINITY : chunks;
    this.#schedule();
    await this.settled(timeoutMs);
  }

  /** What still moves; empty when the agent is still. */
  #pending(): string[] {
    const pending: string[] = [];
    if (this.#inFlight.size > 0) pending.push(`${this.#inFlight.size} frame(s) or read(s) on their way`);
    if (this.#down.length > 0) pending.push(`${this.#down.length} frame(s) to deliver`);
    if (this.#agent.running > 0) pending.push(`${this.#agent.running} call(s) running`);
    const server = this.#server;
    const released = this.#releasedFor === server.running ? this.#released : 0;
    const waitingForAdvance = this.#options.pace === "manual" && released === 0 && this.#chunkNext();
    if ((server.running || server.queue.length > 0) && !waitingForAdvance) pending.push("a turn running or queued");
    // What the chat received but still holds back for its throttle window is not on screen yet.
    const withheld = withheldPublications();
    if (withheld > 0) pending.push(`${withheld} chat(s) holding an update for their throttle window`);
    return pending;
  }

  async settled(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // Still for a few tasks in a row: what the client does with the last frame (its promise continuations, a frame it sends back) runs first.
    for (let still = 0; still < 3; ) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      const pending = this.#pending();
      still = pending.length === 0 ? still + 1 : 0;
      if (still === 0 && Date.now() > deadline) {
        throw new Error(`[agents-vue/testing] The test agent did not settle in ${timeoutMs} ms: ${pending.join(", ")}.`);
      }
    }
  }

  // ── Transcript reads ──

  readonly fetch = ((input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const path = url.replace(/\?.*$/, "");
    if (method !== "GET" || !path.endsWith("/get-messages") || !this.#addresses.has(path.slice(0, -"/get-messages".length))) {
      return Promise.resolve(new Response("Not found", { status: 404 }));
    }
    return new Promise<Response>((resolve) => {
      this.#later(() => {
        this.reads++;
        resolve(new Response(JSON.stringify(this.#server.stored), { status: 200, headers: { "content-type": "application/json" } }));
          });
    });
  }) as typeof fetch;

  readonly getInitialMessages = async (): Promise<UIMessage[]> => {
    const response = await this.fetch(`${this.url}/get-messages`);
    return (await response.json()) as UIMessage[];
  };

  dispose(): void {
    if (this.#disposed) return;
    this.drop();
    this.#disposed = true;
    for (const timer of this.#inFlight) clearTimeout(timer);
    this.#inFlight.clear();
    if (this.#pump !== null) clearTimeout(this.#pump);
    if (this.#chunkDue !== null) clearTimeout(this.#chunkDue);
    releaseFetch(this);
  }
}

/**
 * An in-memory `AIChatAgent` for component tests: no server, no network.
 *
 * ```ts
 * const agent = createTestAgent({ replies: ["Hello there"] });
 * const chat = useAgentChat({ agent: agent.socket });
 * await chat.sendMessage({ text: "Hi" });
 * await agent.settled();
 * ```
 */
export function createTestAgent<State = unknown, Methods extends Record<string, TestHandler> = Record<string, TestHandler>>(
  options: TestAgentOptions<State, Methods> = {}
): TestAgent<State> {
  return new TestAgentImpl<State>(options as TestAgentOptions<State>);
}

