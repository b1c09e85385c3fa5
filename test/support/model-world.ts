import { httpAddressOf } from "../../src/core/address";
import { type ChatOptions, chatCells, createChatSession } from "../../src/core/chat";
import type { AgentSocket } from "../../src/core/connection";
import { decodeSocketFrame } from "../../src/core/frames";
import { hasPendingClientToolCalls } from "../../src/core/tools";
import type { TranscriptRead } from "../../src/core/model/base";
import { ChatSession, type SessionInternals, type SessionSettings } from "../../src/core/session";
import { defaultSettings } from "./model-harness";
import { SimAgent } from "../../src/testing/sim-agent";
import type { Down } from "../../src/testing/sim-port";
import { WorldClock } from "./world/clock";
import { pushingAgents } from "../../src/core/reads";
import { WorldStore } from "./world/store";
import { createChatPersistence } from "../../src/persist";
import type { ChatPersistence, ConversationStore } from "../../src/core/persistence";
import { type Command, GAPS, type M, WorldError, type WorldOptions, type WorldPort, clone } from "./world/shared";

export { type Command, GAPS, type WorldOptions, WorldError } from "./world/shared";

/**
 * A whole conversation in one process, for the model's property test: a
 * simulated `AIChatAgent` (`src/testing/sim-agent.ts`, the module `agents-vue/testing` ships: stored transcript, serialized
 * turns, broadcasts, resumable streams, the resume handshake), the network
 * between it and this client (one ordered frame channel each way, transcript
 * reads on another connection), other clients reduced to what they make the
 * server do, and this client: the shipped `ChatSession` (the real AI SDK
 * `AbstractChat`, upstream's `WebSocketChatTransport`, `PublishingChatState`),
 * constructed as `useAgentChat` constructs it, at its I/O boundary. The world
 * owns every source of nondeterminism: the socket (frames in, frames out, open
 * and close), `fetch` (transcript reads it answers when it chooses), the clock
 * (`world/clock.ts`: every timer fires when the world says) and `Math.random`
 * (seeded per run).
 *
 * Each `Command` is one task (a socket frame, a read answer, a user action, a
 * timer); the promise continuations it starts run to the end before the next
 * one (the world awaits a real `setImmediate`).
 */

// ─── The world ─────────────────────────────────────────────────────────

interface OpenRead {
  read: TranscriptRead;
  first: boolean;
  /** Frames this client had sent when the read left: the server takes them first (the socket was already open). */
  after: number;
  /**
   * Frames the server had sent this client when it answered: they arrive
   * before the answer (they had a round trip's head start). Later frames
   * may arrive before or after it.
   */
  behind: number;
  /** The stored transcript when the server answered; undefined while the request travels. */
  answer: M[] | undefined;
  /** Messages the server had held and no longer held when it answered (another client's clear or rewrite removed them). */
  removed?: Set<string>;
  respond: (response: Response) => void;
  fail: (error: Error) => void;
}

/** What this client's user sent, to tell a lost message from one a clear or rewrite removed. */
interface SentRecord {
  id: string;
  /** A reset (a clear) dropped it while it was queued. */
  dropped: boolean;
  /** It waited in the outbox (queued) at some point, rather than going out at once. */
  queued?: boolean;
  /** Why a restart may have lost it (what the client does not promise); then it need not arrive. */
  excused?: string;
}

/** The conversation key `useAgentChat` gives the persistence for the world's socket (host, base path, agent, name). */
const PERSIST_KEY = "world.test/agents/chat-agent/default";

/** A deterministic generator for the world's own choices (mulberry32). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Timers due within this long (ms) fire on a `timer` step; later ones (a probe's timeout) only once nothing else happens. */
const SHORT_TIMER_MS = 1_000;
/** Timers due within this long fire before anything else at quiescence (a throttle, a delta run, a batch, a launch). */
const PROMPT_TIMER_MS = 100;

const clock = new WorldClock();
const realRandom = Math.random;
const realFetch = globalThis.fetch;
const realConsoleError = console.error;
const realSetImmediate = setImmediate;
/** Lets every promise continuation queued so far run (a macrotask the world does not fake). */
const drain = () => new Promise<void>((resolve) => realSetImmediate(resolve));
let current: World | null = null;
/** The socket the session is handed, as `AgentClient` looks to it: the world opens and closes it and delivers its frames. */
/** Pages of every world so far: each page's host is its own. */
let pagesEver = 0;

class WorldSocket implements AgentSocket {
  readyState = 0;
  /**
   * Where the socket points: the address transcript reads go to (`httpAddressOf`). Each page of each world
   * has a host of its own, as a reload has a fresh page: nothing a page kept in memory (a read in flight,
   * an agent known to push its transcript) reaches the next.
   */
  readonly _pkurl: string;
  readonly _pk = "world";
  readonly agent = "chat-agent";
  readonly name = "default";
  readonly #listeners = new Map<string, Set<(event: MessageEvent) => void>>();

  constructor(
    private readonly world: World,
    page: string
  ) {
    this._pkurl = `ws://${page}.world.test/agents/chat-agent/default`;
  }

  send(data: string): boolean {
    return this.world.clientSend(JSON.parse(data) as Record<string, unknown>);
  }

  addEventListener(type: string, listener: (event: MessageEvent) => void): void {
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(listener);
  }

  removeEventListener(type: string, listener: (event: MessageEvent) => void): void {
    this.#listeners.get(type)?.delete(listener);
  }

  /** The session closes a socket it owns when it is disposed (a tab closing): the world ends the connection (`restart`). */
  close(): void {
    this.readyState = 3;
  }

  emit(type: string, event: unknown): void {
    for (const listener of Array.from(this.#listeners.get(type) ?? [])) listener(event as MessageEvent);
  }
}

export class World implements WorldPort {
  readonly down: Down[] = [];
  readonly up: Array<{ conn: number; frame: Record<string, unknown> }> = [];
  /** Frames sent while the socket was closed: PartySocket sends them once it opens. */
  private readonly buffered: Array<Record<string, unknown>> = [];
  readonly reads: OpenRead[] = [];
  readonly server: SimAgent;
  /** This page's socket, cells and session: a `restart` replaces them all, as a reload does. */
  socket!: WorldSocket;
  cells!: ReturnType<typeof chatCells<M>>;
  session!: ChatSession<M>;
  /** The rules' state behind the session (read only). */
  inside!: SessionInternals<M>;
  /** The browser's durable storage, which outlives every page (with `persist`). */
  readonly store = new WorldStore();
  /** Pages this client had: 1 + restarts. */
  pages = 0;
  /** Queued sends a dead page left in the store for the next page to deliver (held to it: see `violations`). */
  readonly carried = new Set<string>();
  /** Chat requests (`submit-message`) this client's pages sent, by the id of the message they submit. */
  readonly submitted = new Map<string, number>();
  /** User messages this client edited (an edit submits an existing id again). */
  readonly edited = new Set<string>();
  /**
   * Sends a dead page had submitted whose removal from the store had not
   * committed: the next page adopts them again, and sends them again unless
   * the server's transcript holds them (see `restart`).
   */
  private readonly mayResubmit = new Set<string>();
  /** The transcript a restarted page without a first load was seeded with, until its socket opens. */
  private seeded: string | null = null;
  /** Sends submitted again while the server's transcript no longer held them: not promised (RELIABILITY.md, known limitations). */
  readonly resubmitted = new Set<string>();
  /** Adopted sends the page last saw removed: the read it answered was served after another client removed them. */
  private readonly checkedRemoved = new Set<string>();
  readonly sent: SentRecord[] = [];
  readonly log: string[] = [];
  /** Errors the session's public calls rejected with, or logged (a frame that failed to apply). */
  readonly errors: string[] = [];
  /**
   * Why this client's transcript need not match the server's now: what the
   * real system does not promise. A later transcript frame carrying the
   * whole stored transcript (not itself stale) settles them.
   */
  readonly unpromised = new Set<string>();
  /** Open counterexamples the lead decides on (see `GAPS`): a run that hits one is not held to convergence (with a stock agent). */
  readonly gaps = new Set<string>();
  /**
   * The server runs the ordered server half (`orderTranscript`, exact sync):
   * every version reaches this client, so nothing of what a stock agent does
   * not promise applies. The world registers none of those excuses, and a run
   * is held to every invariant (see `violations`).
   */
  readonly ordered: boolean;

  /** What the real system does not promise, with a stock agent (an ordered world excuses nothing). */
  private excuse(why: string): void {
    if (!this.ordered) this.unpromised.add(why);
  }
  /** The options the session reads, as `useAgentChat` defaults them. */
  readonly settings: SessionSettings<M>;
  /** The last transcript read the session made, and whether it is the first load. */
  private lastRead: TranscriptRead | null = null;
  private readingFirst = false;

  gap(name: keyof typeof GAPS): void {
    this.gaps.add(name);
  }

  /** The session's working transcript (what the AI SDK chat holds). */
  get messages(): M[] {
    return this.session.chat.messages;
  }

  /** The AI SDK chat's response in flight (a request, or a resume waiting for or reading its stream). */
  get activeResponse(): { state: { message: M } } | undefined {
    return (this.session.chat as unknown as { activeResponse?: { state: { message: M } } }).activeResponse;
  }

  /** Another tab's list from before this client's clear writes back what the clear removed (see `GAPS`). */
  private writesBackCleared(list: readonly M[]): void {
    const held = this.inside.model.intents.clear?.cleared;
    if (held && list.some((message) => held.has(message.id)) && !this.ordered) this.gap("stale-list-restores-cleared");
  }

  /** Requests this client sent or the AI SDK resumed: its status follows them. */
  readonly own = new Set<string>();

  /**
   * Whether a turn this client followed as its own failed on the server and no turn it started later completed:
   * only then may its status say "error" (a stop or a skipped turn leaves an earlier failure standing).
   */
  get lastOwnTurnFailed(): boolean {
    let failed = false;
    for (const id of this.own) {
      const outcome = this.server.outcomes.get(id);
      if (outcome === "error") failed = true;
      else if (outcome === "completed") failed = false;
    }
    return failed;
  }

  /** Replies of requests this client stopped: stop() promises their text stops growing, so they may show less than the server stored. */
  readonly stoppedReplies = new Set<string>();

  /** Requests whose done frame reached this client: their stream records must be closed. */
  readonly ended = new Set<string>();

  /** Whether the server ended the request while this client's connection that would get its done was closed. */
  lostEnd(id: string): boolean {
    return this.server.outcomes.has(id) && !this.ended.has(id);
  }

  /** `setMessages` calls that sent their list. */
  private replaces = 0;
  /** This client's chat requests, in the order the server took them (`Down.taken.requests` counts them). */
  private readonly requestsTaken: Array<Record<string, unknown>> = [];
  /** This client's clears, and whether each was made with the socket down (then nothing holds back stale broadcasts). */
  private readonly clears: boolean[] = [];
  open = false;
  conn = 0;
  private ids = 0;
  private shapes = 0;
  private readonly random: () => number;

  /** A new world with this client's session constructed and its socket open; the previous world's session is disposed. */
  static async create(options: WorldOptions & { seed: number; trace?: boolean }): Promise<World> {
    current?.leavePage();
    current = null;
    clock.install();
    clock.reset();
    Math.random = generator(options.seed ^ 0x5bd1e995);
    globalThis.fetch = ((input: RequestInfo | URL) => current!.fetch(String(input))) as typeof fetch;
    // The session reports what it could not apply on the console: a run that does is a failure.
    console.error = (...args: unknown[]) => void current?.errors.push(`console.error: ${args.map(String).join(" ")}`);
    const world = new World(options);
    current = world;
    await drain();
    await world.run({ kind: "reopen" }, false);
    return world;
  }

  /** Disposes the last world's session and gives the process its clock, `fetch` and `Math.random` back. */
  static async release(): Promise<void> {
    current?.leavePage();
    current = null;
    await drain();
    clock.uninstall();
    Math.random = realRandom;
    globalThis.fetch = realFetch;
    console.error = realConsoleError;
  }

  private constructor(readonly options: WorldOptions & { seed: number; trace?: boolean }) {
    this.random = generator(options.seed);
    this.settings = defaultSettings<M>({ resume: options.resume, autoContinueAfterToolResult: options.autoContinue });
    this.ordered = options.ordered === true;
    this.server = new SimAgent(this, this.down, { ordered: this.ordered });
    this.start();
  }

  /**
   * A page of this client: a fresh socket (closed until the world opens it),
   * fresh cells and a fresh `ChatSession`, constructed as `useAgentChat`
   * constructs them, with `persist` over the world's store when the world keeps one.
   */
  private start(seed: M[] = []): void {
    const options = this.options;
    this.pages++;
    this.socket = new WorldSocket(this, `page${++pagesEver}`);
    this.cells = chatCells<M>(<T>(value: T) => ({ value }));
    this.lastRead = null;
    this.readingFirst = false;
    const socket = this.socket;
    // A page knows which agents push their transcript on connect only from its own chats (`pushingAgents`, page state;
    // the factory keys an agent by its address without the instance name, and each page has a host of its own).
    // An ordered world with an odd seed starts its first page as if an earlier chat of it had seen this agent push
    // (rule: first frame decides): the first load then waits for the connect-time transcript instead of reading.
    this.agentKey = httpAddressOf(socket)!.replace(/\/[^/]*$/, "");
    if (this.ordered && this.pages === 1 && options.seed % 2 === 1) pushingAgents.add(this.agentKey);
    // A reload runs the app's module again: `indexedDBPersistence()` is created anew over the same storage.
    const persist = options.persist ? this.watchQueued(createChatPersistence(this.store.handle())) : undefined;
    // The chat as an app that owns its socket makes it: the default `/get-messages` reads through `fetch`.
    const chat: ChatOptions<M> = { generateId: () => this.newId("g"), initialMessages: options.load ? undefined : seed, persist };
    const target = { socket, owns: true, agent: socket.agent, name: socket.name, label: `${socket.agent}/${socket.name}`, key: PERSIST_KEY };
    this.session = createChatSession<M>(chat, target, this.cells, this.settings, (config) => ({
      ...config,
      // The world names each read: the first load, or a read-back.
      loadOnOpen: config.loadOnOpen && (() => ((this.readingFirst = true), config.loadOnOpen!())),
      readStored: config.readStored && (() => ((this.readingFirst = false), config.readStored!()))
    }));
    this.inside = ChatSession.inspect(this.session);
    // The world names each read the session makes by the record the rules keep of it.
    const base = this.inside.model.base;
    const read = base.read.bind(base);
    base.read = (always, attempt) => (this.lastRead = read(always, attempt));
  }

  /** This page's key for its agent (see `start`). */
  private agentKey = "";

  /** The page goes: its session is disposed, and what it knew of the agent with it. */
  private leavePage(): void {
    this.session.dispose();
    pushingAgents.delete(this.agentKey);
  }

  /** Notes each send the session hands its store as queued. */
  private watchQueued(persistence: ChatPersistence): ChatPersistence {
    return {
      open: <T extends M>(key: string, chat: Parameters<ChatPersistence["open"]>[1]) => {
        const store = persistence.open<T>(key, chat as never);
        const noted: ConversationStore<T> = {
          ...store,
          queued: (message) => {
            this.noteQueued(message.id);
            store.queued(message);
          }
        };
        return noted;
      }
    } as ChatPersistence;
  }

  private noteQueued(id: string): void {
    const record = this.sent.find((entry) => entry.id === id);
    if (record) record.queued = true;
  }

  newId(prefix: string): string {
    return `${prefix}${++this.ids}`;
  }

  coin(): boolean {
    return this.random() < 0.5;
  }

  nextReplyShape(): number {
    const shapes = this.options.replyShapes;
    return shapes.length > 0 ? shapes[this.shapes++ % shapes.length]! : Math.floor(this.random() * 8);
  }

  /** Frames this client sent, and how many of them the server took. */
  private upSent = 0;
  private upTaken = 0;

  /** The socket's `send` (a frame the session serialized, parsed afresh): on the open socket, or buffered until it opens (then `false`, as PartySocket says). */
  clientSend(frame: Record<string, unknown>): boolean {
    // Turns this client follows as its own: its requests, and the streams the AI SDK's resume took (an ACK while
    // the AI SDK resume runs; an ACK for a turn the session only watches leaves the status alone).
    const resumed = frame.type === "cf_agent_stream_resume_ack" && this.inside.resuming;
    if ((frame.type === "cf_agent_use_chat_request" || resumed) && typeof frame.id === "string") this.own.add(frame.id);
    if (frame.type === "cf_agent_use_chat_request") {
      const body = JSON.parse(String((frame.init as { body?: unknown } | undefined)?.body ?? "{}")) as { messages?: M[]; trigger?: string };
      const last = body.messages?.at(-1);
      if (body.trigger === "submit-message" && last?.role === "user") {
        this.submitted.set(last.id, (this.submitted.get(last.id) ?? 0) + 1);
        if (this.mayResubmit.has(last.id) && this.submitted.get(last.id)! > 1) {
          // Also when the read the page checked was served after another client removed it, and a stale list wrote it back since.
          if (!this.server.stored.some((message) => message.id === last.id) || this.checkedRemoved.has(last.id)) this.resubmitted.add(last.id);
        }
      }
    }
    if (this.open) {
      this.upSent++;
      this.up.push({ conn: this.conn, frame });
      return true;
    }
    this.buffered.push(frame);
    return false;
  }

  /** The fake `fetch`: a transcript read that travels until the world serves and answers it. */
  private fetch(url: string): Promise<Response> {
    if (!url.endsWith("/get-messages") || !this.lastRead) throw new WorldError(`the session fetched ${url}`);
    return new Promise<Response>((respond, fail) => {
      this.reads.push({ read: this.lastRead!, first: this.readingFirst, answer: undefined, after: this.upSent, behind: 0, respond, fail });
      this.readingFirst = false;
    });
  }

  /**
   * Whether a chat request of this client's that the server took after sending a frame (or has not taken yet)
   * carried a message, other than the one it submits, that the frame's list lacks.
   */
  private laterRequestWritesBack(takenWhenSent: number, list: readonly M[]): boolean {
    const inFrame = new Set(list.map((message) => message.id));
    const later = [...this.requestsTaken.slice(takenWhenSent), ...this.up.map((up) => up.frame).filter((frame) => frame.type === "cf_agent_use_chat_request")];
    return later.some((frame) => {
      const carried = (JSON.parse(String((frame.init as { body?: unknown } | undefined)?.body ?? "{}")) as { messages?: M[] }).messages ?? [];
      return carried.slice(0, -1).some((message) => !inFrame.has(message.id));
    });
  }

  /** A read the server can answer now. */
  private servable(read: OpenRead): boolean {
    return read.answer === undefined && read.after <= this.upTaken;
  }

  /** A read whose answer can arrive now. */
  private answerable(read: OpenRead): boolean {
    return read.answer !== undefined && read.behind <= this.downGone;
  }

  /** Frames to this client so far, and how many of them arrived (or were lost with a closed socket). */
  private get downGone(): number {
    return this.server.framesSent - this.down.length;
  }

  /**
   * Queued sends a clear drops settle unsent: they are not lost. So do the sends a page that died left stored and this
   * one has not adopted yet (rule: a clear empties the outbox, stored sends of gone pages included).
   */
  private async clearing(run: () => void): Promise<void> {
    const queued = this.inside.model.intents.queued.map((entry) => entry.message.id);
    const onTheWire = (id: string) => this.server.everHeld.has(id) || this.up.some((up) => carries(up.frame, id));
    if (this.options.persist) queued.push(...[...this.carried].filter((id) => !queued.includes(id) && !onTheWire(id)));
    run();
    await drain();
    const still = new Set(this.inside.model.intents.queued.map((entry) => entry.message.id));
    for (const id of queued) {
      const record = this.sent.find((entry) => entry.id === id);
      if (record && !still.has(id)) record.dropped = true;
    }
  }

  /** A public call of the session: a rejection is recorded, never lost. */
  private call(name: string, run: () => Promise<unknown> | unknown): void {
    try {
      const result = run();
      if (result instanceof Promise) result.catch((error: unknown) => this.errors.push(`${name} rejected: ${String(error)}`));
    } catch (error) {
      this.errors.push(`${name} threw: ${String(error)}`);
    }
  }

  // ── Tasks ──

  async run(command: Command, record = true): Promise<void> {
    if (record) this.log.push(JSON.stringify(command));
    await this.apply(command);
    await drain();
    for (const entry of this.inside.model.intents.queued) this.noteQueued(entry.message.id);
    // A reply under an id the AI SDK or the observer made up: no server message has it.
    if (this.messages.some((message) => message.role === "assistant" && message.id.startsWith("g") && message.parts.length > 0)) this.gap("reply-under-own-id");
    if (this.options.trace) {
      const m = this.inside.model;
      this.log.push(
        `    screen [${idsOf(this.messages).join(",")}] server [${idsOf(this.server.stored).join(",")}] status ${this.session.chat.status} observed ${m.observed.streamId}/${m.observed.message?.id} local [${m.turns.local.join(",")}] hold ${m.intents.clear ? `[${[...m.intents.clear.arrived].join(",")}]` : "-"}`
      );
    }
  }

  private async apply(command: Command): Promise<void> {
    const session = this.session;
    const server = this.server;
    switch (command.kind) {
      case "send": {
        const message: M = { id: this.newId("u"), role: "user", parts: [{ type: "text", text: `hello ${this.ids}` }] };
        this.sent.push({ id: message.id, dropped: false });
        return this.call("sendMessage", () => session.sendMessage(message));
      }
      case "stop": {
        const m = this.inside.model;
        for (const id of m.turns.local) {
          const reply = m.turns.get(id)?.reply?.id;
          if (reply !== undefined) this.stoppedReplies.add(reply);
        }
        const active = this.activeResponse?.state.message.id;
        if (active) this.stoppedReplies.add(active);
        return this.call("stop", () => session.stop());
      }
      case "regenerate":
        if (this.messages.length === 0) return;
        return this.call("regenerate", () => session.regenerate());
      case "edit": {
        const users = this.messages.filter((message) => message.role === "user");
        const target = users[command.pick % Math.max(users.length, 1)];
        if (!target) return;
        const edited = { id: target.id, role: "user" as const, parts: [{ type: "text" as const, text: `edited ${this.ids++}` }], messageId: target.id };
        this.edited.add(target.id);
        return this.call("sendMessage (edit)", () => session.sendMessage(edited));
      }
      case "clear":
        this.clears.push(!this.open);
        return this.clearing(() => session.clearHistory());
      case "setMessages": {
        const messages = this.messages;
        this.replaces++;
        return this.call("setMessages", () => session.setMessages(clone(messages.slice(0, command.pick % (messages.length + 1)))));
      }
      case "toolOutput": {
        const calls = pendingCalls(this.messages).filter((id) => !this.inside.model.tools.results.has(id));
        const toolCallId = calls[command.pick % Math.max(calls.length, 1)];
        if (toolCallId) this.call("addToolOutput", () => session.tools.addToolOutput({ toolCallId, toolName: "ask", output: { answer: toolCallId } }));
        return;
      }
      case "otherSend": {
        const view = this.view(command.stale);
        this.writesBackCleared(view);
        server.request({ kind: "other" }, this.newId("x"), [...view, { id: this.newId("o"), role: "user", parts: [{ type: "text", text: "from another tab" }] }], command.shape);
        return;
      }
      case "otherRegenerate": {
        const view = this.view(command.stale);
        if (view.length === 0) return;
        const list = view.at(-1)!.role === "assistant" ? view.slice(0, -1) : view;
        this.writesBackCleared(list);
        server.request({ kind: "other" }, this.newId("x"), list, command.shape);
        return;
      }
      case "otherEdit": {
        const view = this.view(command.stale);
        const users = view.map((message, index) => ({ message, index })).filter(({ message }) => message.role === "user");
        const target = users[command.pick % Math.max(users.length, 1)];
        if (!target) return;
        const edited: M = { id: target.message.id, role: "user", parts: [{ type: "text", text: `edited elsewhere ${this.ids++}` }] };
        this.writesBackCleared(view.slice(0, target.index + 1));
        server.request({ kind: "other" }, this.newId("x"), [...view.slice(0, target.index), edited], command.shape);
        return;
      }
      case "otherClear":
        return server.clear({ kind: "other" }, this.coin());
      case "otherSetMessages": {
        const view = this.view(command.stale);
        const list = view.slice(0, command.pick % (view.length + 1));
        this.writesBackCleared(list);
        return server.replaceStored({ kind: "other" }, list);
      }
      case "otherToolOutput": {
        const calls = pendingCalls(server.stored);
        const toolCallId = calls[command.pick % Math.max(calls.length, 1)];
        if (toolCallId) server.toolResult({ kind: "other" }, toolCallId, { answer: "elsewhere" }, command.autoContinue);
        return;
      }
      case "otherStop":
        if (server.running) server.cancel(server.running.requestId);
        return;
      case "serverUp": {
        const next = this.up.shift();
        if (!next) return;
        this.upTaken++;
        if (next.frame.type === "cf_agent_use_chat_request") this.requestsTaken.push(next.frame);
        server.receive(next.conn, next.frame);
        return;
      }
      case "serverTurn":
        server.step();
        return;
      case "fail":
        if (server.running?.started) server.running.fail = command.inBand ? "in-band" : "thrown";
        return;
      case "deliver":
        // Each frame is a task of its own: the continuations it starts run before the next one.
        for (let i = 0; i < command.count && this.down.length > 0; i++) {
          await this.deliverOne();
          await drain();
        }
        return;
      case "serveRead": {
        const waiting = this.reads.filter((read) => this.servable(read));
        const read = waiting[command.pick % Math.max(waiting.length, 1)];
        if (read) {
          read.answer = clone(server.stored);
          read.behind = server.framesSent;
          read.removed = new Set([...server.everHeld].filter((id) => !server.stored.some((message) => message.id === id)));
        }
        return;
      }
      case "answerRead": {
        const answered = this.reads.filter((read) => this.answerable(read));
        const read = answered[command.pick % Math.max(answered.length, 1)];
        if (read) await this.answer(read);
        return;
      }
      case "failRead": {
        const open = this.reads[command.pick % Math.max(this.reads.length, 1)];
        if (!open) return;
        this.reads.splice(this.reads.indexOf(open), 1);
        this.log.push(`  read ${open.read.id} failed`);
        // The chat says it could not load the transcript: expected here, not worth the console.
        const warn = console.warn;
        console.warn = () => {};
        try {
          open.fail(new TypeError("Failed to fetch"));
          await drain();
        } finally {
          console.warn = warn;
        }
        return;
      }
      case "cut":
        return this.cut();
      case "reopen":
        return this.reopen();
      case "timer": {
        const due = clock.nextIn();
        if (due !== undefined && due <= SHORT_TIMER_MS) this.fireTimer();
        return;
      }
      case "store":
        // Each completion is a task of its own, as IndexedDB's events are.
        for (let i = 0; i < command.count && this.store.waiting > 0; i++) {
          this.store.land();
          await drain();
        }
        return;
      case "restart":
        return this.restart(command.keep);
    }
  }

  /**
   * The tab dies and the page is loaded again: the session is disposed as an
   * unmount disposes it (its socket closes; frames it had sent on the open
   * socket still reach the server, frames on their way to it, its open reads
   * and what waited in its closed socket's buffer are gone), the durable
   * store loses the writes that had not committed (but a prefix `keep`
   * picks), and a fresh page's session starts from what the store holds.
   *
   * What the client promises across it (docs/guide/persist.md, "Surviving a
   * reload"): a send that waited in the outbox is kept from the moment its
   * write commits until its request went out and ended, and the next page
   * delivers it exactly once. Not promised, so excused here: a queued send
   * whose write had not committed when the tab died (or any queued send
   * without `persist`: the chat warns), and a send that went out at once
   * (never queued) whose request had not left the page.
   */
  private async restart(keep: number): Promise<void> {
    const queued = this.inside.model.intents.queued.length;
    const warn = console.warn;
    const warnings: string[] = [];
    console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(" "));
    try {
      this.leavePage();
    } finally {
      console.warn = warn;
    }
    // Without `persist`, sends still queued are lost, and the chat says so.
    if (!this.options.persist && queued > 0 && !warnings.some((warning) => warning.includes("were not sent"))) this.errors.push(`${queued} queued send(s) went with the tab without a warning`);
    await drain();
    if (this.open) {
      this.open = false;
      this.server.disconnected();
    }
    this.down.length = 0;
    this.reads.length = 0;
    const unsent = this.buffered.splice(0);
    // With nothing left to complete, every write the page made had committed: a queued send missing then was never written.
    const settled = this.store.waiting === 0;
    const [committed, lost] = this.options.persist ? this.store.kill(keep) : [0, 0];
    this.log.push(`  tab died: ${committed} write(s) committed, ${lost} lost, ${unsent.length} frame(s) unsent`);
    for (const record of this.sent) {
      if (record.dropped || record.excused || this.server.everHeld.has(record.id)) continue;
      // On the wire: the server takes it.
      if (this.up.some((up) => carries(up.frame, record.id))) continue;
      if (record.queued && this.options.persist && (settled || this.store.persistedSends.has(record.id))) {
        this.carried.add(record.id);
        continue;
      }
      record.excused = !record.queued
        ? "sent at once (not queued), its request had not left the page when the tab died"
        : this.options.persist
          ? "queued, its write had not committed when the tab died"
          : "queued without persist when the tab closed (the chat warns)";
      this.log.push(`  ${record.id} may be lost: ${record.excused}`);
    }
    // Without a first load the app hands the page its transcript (`initialMessages`, e.g. rendered on the server): the server's now.
    const seed = this.options.load ? [] : clone(this.server.stored);
    this.seeded = JSON.stringify(seed);
    const kept = (this.store.data.get(`q:${PERSIST_KEY}`) as Array<{ message: { id: string } }> | undefined) ?? [];
    for (const { message } of kept) if (this.submitted.has(message.id)) this.mayResubmit.add(message.id);
    this.own.clear();
    this.start(seed);
    await drain();
  }

  private fireTimer(): void {
    try {
      clock.fireNext();
    } catch (error) {
      this.errors.push(`a timer threw: ${String(error)}`);
    }
  }

  /** The transcript another client acts on: the server's, or one it held a little earlier (its broadcasts still travel). */
  private view(stale: number): M[] {
    const history = this.server.history;
    return clone(history[Math.max(0, history.length - 1 - (stale % 3))]!);
  }

  private async deliverOne(): Promise<void> {
    const next = this.down.shift()!;
    if (next.conn !== this.conn || !this.open) return;
    const data = JSON.stringify(next.frame);
    this.log.push(`  ⇣ ${data.length > 300 ? `${data.slice(0, 300)}…` : data}`);
    const frame = decodeSocketFrame<M>(data, undefined, (key) => {
      throw new WorldError(`the server sent a frame the client rejects: ${key}`);
    });
    if (!frame) return;
    const m = this.inside.model;
    if (frame.kind === "response" && frame.done) this.ended.add(frame.id);
    const c = m.continuation;
    if (frame.kind === "resuming" && c.kind === "cancel-on-start" && c.requestId === null && frame.probeId === c.probeId) {
      if (m.observed.streamId === frame.id || m.turns.isLocal(frame.id)) this.gap("stopped-continuation-unnamed");
    }
    // A probe takes an offer of a request this client already owns (see `GAPS`).
    if (frame.kind === "resuming" && m.turns.isLocal(frame.id) && m.handshake !== null) this.gap("probe-takes-own-request");
    // Nothing holds a `setMessages` list against an older broadcast (upstream neither): such runs promise no convergence.
    const stale = next.taken.replaces < this.replaces || next.taken.clears < this.clears.length;
    if (frame.kind === "messages" && next.whole && !stale && m.intents.clear === null && m.intents.rewrite === null) this.unpromised.clear();
    if ((frame.kind === "messages" || frame.kind === "message-updated") && !this.ordered) {
      if (next.taken.replaces < this.replaces) this.unpromised.add("a transcript frame the server sent before it took this client's setMessages arrived after it");
      // A clear made offline holds nothing back (it needs an open socket so that the clear reaches the server before its read).
      if (this.clears.slice(next.taken.clears).includes(true)) this.unpromised.add("a transcript frame the server sent before it took this client's offline clear arrived after it");
      // Nor against this client's own chat request: what the request carried and the frame lacks, the request writes back.
      if (frame.kind === "messages" && this.laterRequestWritesBack(next.taken.requests, frame.messages)) {
        this.unpromised.add("a transcript frame the server sent before it took this client's chat request arrived after it, without a message the request carried");
      }
    }
    if (frame.kind === "clear") return this.clearing(() => this.socket.emit("message", { data }));
    this.socket.emit("message", { data });
  }

  private async answer(open: OpenRead): Promise<void> {
    this.reads.splice(this.reads.indexOf(open), 1);
    this.log.push(`  read ${open.read.id} answered: [${idsOf(open.answer!).join(",")}]`);
    const answer = open.answer!;
    for (const id of this.mayResubmit) {
      if (open.removed?.has(id)) this.checkedRemoved.add(id);
      else if (answer.some((message) => message.id === id)) this.checkedRemoved.delete(id);
    }
    const m = this.inside.model;
    const admitted = open.first ? m.base.admitFirst(open.read, true) : m.base.admit(open.read, true) === "admit";
    const held = m.intents.clear !== null;
    open.respond(new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } }));
    await drain();
    // Documented: a clear's hold ends without its read when setMessages replaced the transcript, or frames kept overtaking the read; what it held back stays out.
    if (held && m.intents.clear === null && !admitted) this.excuse("a clear's hold ended without an admitted read");
    // The merge keeps what only the screen has (`mergeStoredWins`, `prependMissing`): also what the server removed meanwhile.
    const kept = new Set(answer.map((message) => message.id));
    const unconfirmed = m.intents.unechoed;
    const removedMeanwhile = (id: string) => this.server.everHeld.has(id) && !this.server.stored.some((stored) => stored.id === id);
    if (admitted && this.messages.some((message) => !kept.has(message.id) && !unconfirmed.has(message.id) && removedMeanwhile(message.id))) {
      this.excuse("a read's merge kept messages only on screen that the server no longer holds");
    }
  }

  private cut(): void {
    if (!this.open) return;
    const c = this.inside.model.continuation;
    // The stop's probe gets its answer on the socket that sent it, and nothing asks again.
    if (c.kind === "cancel-on-start" && c.requestId === null) this.gap("stopped-continuation-unnamed");
    this.open = false;
    this.server.disconnected();
    this.down.length = 0;
    this.socket.readyState = 3;
    this.socket.emit("close", { code: 1006, reason: "", wasClean: false });
  }

  private reopen(): void {
    if (this.open) return;
    // Nothing reads the transcript for a page without a first load: what changed before its socket opened reaches it only with a later transcript frame.
    if (this.seeded !== null && this.seeded !== JSON.stringify(this.server.stored)) this.excuse("a page seeded with initialMessages missed changes made before its socket opened");
    this.seeded = null;
    this.open = true;
    this.conn++;
    this.server.connected(this.conn);
    for (const frame of this.buffered.splice(0)) {
      this.upSent++;
      this.up.push({ conn: this.conn, frame });
    }
    this.socket.readyState = 1;
    this.socket.emit("open", {});
  }

  /** Runs everything that is pending until nothing is: all frames delivered, reads answered, turns ended, timers fired. */
  async quiesce(): Promise<void> {
    let budget = 20_000;
    const step = (command: Command) => {
      if (--budget === 0) throw new WorldError("the world never quiesces");
      return this.run(command);
    };
    for (;;) {
      const due = clock.nextIn();
      if (!this.open) await step({ kind: "reopen" });
      else if (due !== undefined && due <= PROMPT_TIMER_MS) await step({ kind: "timer", pick: 0 });
      else if (this.down.length > 0) await step({ kind: "deliver", count: 1 });
      else if (this.up.length > 0) await step({ kind: "serverUp" });
      else if (this.store.waiting > 0) await step({ kind: "store", count: 1 });
      else if (this.reads.some((read) => this.servable(read))) await step({ kind: "serveRead", pick: 0 });
      else if (this.reads.some((read) => this.answerable(read))) await step({ kind: "answerRead", pick: 0 });
      else if (this.server.running || this.server.queue.length > 0) await step({ kind: "serverTurn" });
      else if (due !== undefined) {
        if (--budget === 0) throw new WorldError("the world never quiesces");
        this.log.push(`  ⏰ in ${due} ms`);
        this.fireTimer();
        await drain();
      } else break;
    }
  }
}

function pendingCalls(messages: readonly M[]): string[] {
  return messages.flatMap((message) =>
    message.parts.flatMap((part) => {
      const call = part as { toolCallId?: string; state?: string };
      return call.toolCallId && call.state === "input-available" ? [call.toolCallId] : [];
    })
  );
}

const idsOf = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

/** Whether a frame is a chat request whose list carries the message `id`. */
function carries(frame: Record<string, unknown>, id: string): boolean {
  return frame.type === "cf_agent_use_chat_request" && String((frame.init as { body?: unknown } | undefined)?.body ?? "").includes(`"id":"${id}"`);
}


const textOf = (message: M) =>
  message.parts
    .map((part) => (part.type === "text" ? part.text : String(part.type).startsWith("tool-") ? `[${String((part as { toolCallId?: string }).toolCallId)}]` : ""))
    .join("|");

// ─── Invariants at quiescence ───────────────────────────────────────────

/**
 * What went wrong at quiescence; empty when every invariant holds. `strict`
 * also holds a run to what an open counterexample (`GAPS`) breaks;
 * `promisedOnly: false` also to what the real system does not promise.
 * An ordered world is always strict, and excuses nothing a stock agent's
 * unordered writes explain (`unpromised` stays empty there, and a stopped
 * reply must show the text the server stored); what a restart may lose
 * without `persist` (README, "persist") stays excused unless `promisedOnly` is off.
 */
export function violations(world: World, strict = false, promisedOnly = true): string[] {
  strict ||= world.ordered;
  const syncExcused = promisedOnly && !world.ordered;
  const problems: string[] = [];
  const m = world.inside.model;
  const cells = world.cells;
  const screen = world.messages;
  const stored = world.server.stored;
  const shown = idsOf(screen);
  const held = idsOf(stored);
  const duplicates = shown.filter((id, index) => shown.indexOf(id) !== index);
  if (duplicates.length > 0) problems.push(`shown twice: ${duplicates.join(", ")}`);
  const status = world.session.chat.status;
  const failed = world.lastOwnTurnFailed;
  if (!world.server.toldMe && !world.ordered) world.unpromised.add("the server holds a transcript it never sent this client (it sends a client's list as it came)");
  // An ordered world registers no excuse: one here is a world that lets a run off.
  if (world.ordered && world.unpromised.size > 0) problems.push(`an ordered world excused: ${[...world.unpromised].join("; ")}`);
  const relaxed = (syncExcused && world.unpromised.size > 0) || (!strict && world.gaps.size > 0);
  if (relaxed) {
    // Not promised: only what must hold anyway is checked below.
  } else if (shown.join(",") !== held.join(",")) problems.push(`screen [${shown.join(",")}] is not the server's [${held.join(",")}]`);
  else {
    for (let i = 0; i < stored.length; i++) {
      const shownText = textOf(screen[i]!);
      const storedText = textOf(stored[i]!);
      // Not promised: stop() keeps the text a reply had (test/e2e/foundation.test.ts), while the server stores what it streamed until it took the cancel.
      const frozen = syncExcused && world.stoppedReplies.has(stored[i]!.id) && storedText.startsWith(shownText);
      if ((shownText !== storedText && !frozen) || screen[i]!.role !== stored[i]!.role) {
        problems.push(`${stored[i]!.id} shows "${textOf(screen[i]!)}", the server holds "${textOf(stored[i]!)}"`);
      }
    }
  }
  // What the app renders is what the session holds: the throttle flushed.
  if (idsOf(cells.messages.value).join(",") !== shown.join(",")) problems.push(`published messages [${idsOf(cells.messages.value).join(",")}] are not the session's [${shown.join(",")}]`);
  for (const record of world.sent) {
    if (!record.dropped && !(promisedOnly && record.excused) && !shown.includes(record.id) && !world.server.everHeld.has(record.id)) problems.push(`sent message ${record.id} was lost`);
    // Delivered once: no page of this client submits a message twice (an edit submits its id again on purpose).
    const times = world.submitted.get(record.id) ?? 0;
    const excused = promisedOnly && world.resubmitted.has(record.id);
    if (times > 1 && !world.edited.has(record.id) && !excused) problems.push(`sent message ${record.id} was submitted ${times} times`);
  }
  for (const error of world.errors) problems.push(error);
  // One open counterexample leaves a request of this client's hanging.
  if (world.gaps.has("probe-takes-own-request") && !strict) return problems;
  const stuck: Array<[string, unknown, unknown]> = [
    // A reply a socket drop interrupted, which then completed (resumed, followed again, or read back), is not an error.
    ["status", status === "ready" || (status === "error" && failed), true],
    ["error", cells.error.value === undefined ? undefined : `${cells.error.value.message} (status ${status})`, status === "error" ? cells.error.value?.message + ` (status ${status})` : undefined],
    ["published status", cells.status.value, status],
    ["observed turn", m.observed.active, false],
    ["clear hold", m.intents.clear, null],
    ["rewrite", m.intents.rewrite, null],
    ["continuation", world.gaps.has("stopped-continuation-unnamed") && !strict ? "idle" : m.continuation.kind, "idle"],
    ["queued", m.intents.queued.length, 0],
    ["queuedMessages", cells.queued.value.length, 0],
    // With `persist`, the restored page's cached transcript gave way to the server's.
    ["isCached", cells.cached.value, false],
    ["sending", m.intents.sending, false],
    ["unechoed", m.intents.unechoed.size, 0],
    // Not checked: `buffered` (#1983) retires with the next transcript frame, which a sender of its own turn may never get.
    ["held turn", m.turns.heldTurn, null],
    ["recovering turn", m.turns.recoveringTurn, null],
    ["deferred ends", m.turns.deferredEnds.length, 0],
    ["protected reply", m.placement.protectedId, undefined],
    ["pin", m.placement.pin, null],
    // A stopped request's id stays with the transport until its done frame, which a closed connection never gets.
    ["local requests", m.turns.local.filter((id) => world.ended.has(id) || !world.lostEnd(id)).length, 0],
    ["resume running", world.inside.resuming, false],
    ["active response", world.activeResponse !== undefined, false],
    ["isServerStreaming", cells.serverStreaming.value, false],
    // `isStreaming` as `useAgentChat` derives it from the cells.
    ["isStreaming", status === "streaming" || hasPendingClientToolCalls(cells.messages.value, cells.runningToolCalls.value, world.settings.tools, world.settings.toolsRequiringConfirmation), false],
    ["running tool calls", cells.runningToolCalls.value.size, 0],
    ["isToolContinuation", cells.toolContinuation.value, false],
    ["isRecovering", cells.recovering.value, false],
    ["isLoading", cells.loading.value, false],
    ["connectionError", cells.connectionError.value, null],
    ["connectionStatus", cells.connection.value, "open"],
    ["reconnect probe owed", m.probes.reconnect, false],
    ["idle probe out", m.probes.idleId, null]
  ];
  for (const [name, actual, expected] of stuck) if (actual !== expected) problems.push(`stuck: ${name} is ${JSON.stringify(actual)}`);
  for (const id of world.ended) {
    const turn = m.turns.get(id);
    if (!turn) continue;
    const open = Object.entries({
      reply: turn.reply !== null,
      acked: turn.replay.kind === "self",
      unreplayed: turn.unreplayed,
      stopped: turn.follow.kind === "stopped",
      rebuilds: turn.rebuilds,
      clear: turn.clear,
      error: turn.error !== null
    }).filter(([, left]) => left);
    if (open.length > 0) problems.push(`turn ${id} left open: ${open.map(([key]) => key).join(", ")}`);
  }
  return problems;
}

