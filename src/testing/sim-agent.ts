import { CHAT_MESSAGE_TYPES } from "agents/chat";
import { OrderedHalf } from "./ordered-half";
import { applyToStored, replyPlan } from "./replies";
import { type Chunk, type Down, type M, type Part, type ScriptedReply, type Sender, SimulationError, type Taken, type WorldPort, clone, connectionId, senderOf } from "./sim-port";

/**
 * A simulated `AIChatAgent`: the stored transcript, serialized turns that
 * stream chunks with `seq`, broadcasts to the other clients, the resumable
 * stream and the resume handshake, as `@cloudflare/ai-chat` 0.12.2 and
 * `agents/chat` do them (see the notes on each method).
 *
 * One implementation serves two drivers: the project's property test
 * (`test/support/model-world.ts`, which decides when every frame, read and
 * turn step happens) and the testing kit users import
 * (`agents-vue/testing`, `./test-agent.ts`, which drives it on timers).
 * "This client" is the one connection the driver follows; every other
 * client is reduced to what it makes the server do (`Sender` `other`).
 *
 * With `ordered` the agent runs the ordered server half that ships
 * (`orderTranscript` from `agents-vue/server`, `./ordered-half.ts`): every
 * transcript frame carries a version, the sockets a broadcast leaves out get
 * the whole transcript at it, a socket gets the transcript first on connect,
 * snapshot requests are answered and a client's `setMessages` list replaces
 * the stored transcript.
 */

/** How the simulated agent runs. */
export interface SimAgentOptions {
  /** The agent runs `orderTranscript` (exact sync). Default: a stock `AIChatAgent`. */
  ordered?: boolean;
}

interface Turn {
  requestId: string;
  sender: Sender;
  continuation: boolean;
  /** The id the reply is stored under (for a continuation, the message it extends). */
  replyId: string;
  plan: Chunk[];
  next: number;
  /** Chunk bodies sent so far: the resumable stream's buffer. */
  bodies: string[];
  message: M;
  abort: "cancel" | "clear" | null;
  fail: "thrown" | "in-band" | null;
  /** A scripted failure: set as `fail` once that many chunks went out. */
  failAt: ScriptedReply["fail"] | null;
  /** Writes a scripted turn's `plan` and `failAt` when it starts (null: written already). */
  script: (() => void) | null;
  started: boolean;
}

export class SimAgent {
  stored: M[] = [];
  /** Every transcript the server held, for other clients acting on a stale view. */
  readonly history: M[][] = [[]];
  readonly queue: Turn[] = [];
  running: Turn | null = null;
  readonly outcomes = new Map<string, string | undefined>();
  /** This client's connection: its generation, and whether it is open. */
  conn = 0;
  open = false;
  /** Notified of the active stream and not ACKed yet: excluded from live frames. */
  pendingResume = false;
  /** Parked by a probe while a turn is accepted but not streaming (#1784). */
  parked = false;
  /** Parked for a continuation that has not started. */
  awaitingContinuation = false;
  continuationPending: { requestId: string; owner: Sender } | null = null;
  continuationActive: { requestId: string; owner: Sender } | null = null;
  private ids = 0;
  /** The ordered server half over this agent, when it runs one. */
  readonly ordered: OrderedHalf | null;

  constructor(
    private readonly world: WorldPort,
    readonly down: Down[],
    options: SimAgentOptions = {}
  ) {
    this.ordered = options.ordered ? new OrderedHalf(this) : null;
  }

  newId(prefix: string): string {
    return `${prefix}${++this.ids}`;
  }

  /** Every message id the server ever held. */
  readonly everHeld = new Set<string>();

  private remember(): void {
    for (const message of this.stored) this.everHeld.add(message.id);
    this.history.push(clone(this.stored));
    if (this.history.length > 40) this.history.shift();
  }

  /** What of this client's writes the server took so far. */
  readonly taken: Taken = { replaces: 0, clears: 0, requests: 0 };
  /** Frames sent to this client, ever. */
  framesSent = 0;

  /** A frame to this client's open connection; live chunks skip a connection that has not ACKed. */
  toMe(frame: Record<string, unknown>, live = false): void {
    if (!this.open || (live && this.pendingResume)) return;
    this.framesSent++;
    const whole = frame.type === CHAT_MESSAGE_TYPES.CHAT_MESSAGES && sameIds(frame.messages as M[], this.stored);
    this.down.push({ conn: this.conn, frame: clone(frame), taken: { ...this.taken }, whole });
  }

  /** A frame to one connection of this client (answers to its own frames): dropped if that connection closed. */
  private toConn(conn: number, frame: Record<string, unknown>): void {
    if (conn === this.conn) this.toMe(frame);
  }

  /**
   * Broadcast to every client but the sender (`_broadcastChatMessage`). An
   * ordered agent's goes through `Agent#broadcast`, which ordering wraps, and
   * also leaves out a socket waiting to ACK a resume (`_pendingResumeConnections`),
   * as `AIChatAgent` does; ordering sends that one the whole transcript.
   */
  private broadcast(frame: Record<string, unknown>, sender: Sender | null): void {
    if (this.ordered) {
      const without = sender ? [connectionId(sender)] : [];
      if (this.open && this.pendingResume) without.push(connectionId({ kind: "me", conn: this.conn }));
      this.ordered.host.broadcast(JSON.stringify(frame), without);
      return;
    }
    if (sender?.kind === "me" && sender.conn === this.conn) return;
    this.toMe(frame);
  }

  /** `Agent#broadcast` under ordering: the frame reaches this client's open connection unless `without` names it. */
  deliverBroadcast(raw: string, without: readonly string[] = []): void {
    if (this.open && !without.includes(connectionId({ kind: "me", conn: this.conn }))) this.toMe(JSON.parse(raw) as Record<string, unknown>);
  }

  /** A connection by id, as `Agent#getConnection` hands it out: what it is sent reaches this client while that connection is open (other clients are not followed). */
  connection(id: string): { id: string; send(message: string): void } {
    const sender = senderOf(id);
    return { id, send: (message) => sender.kind === "me" && sender.conn === this.conn && this.toMe(JSON.parse(message) as Record<string, unknown>) };
  }

  private activeTurn(): Turn | null {
    return this.running?.started ? this.running : null;
  }

  private accepted(): boolean {
    return this.queue.some((turn) => !turn.continuation) || (this.running !== null && !this.running.started && !this.running.continuation);
  }

  // ── Frames from this client ──

  receive(conn: number, frame: Record<string, unknown>): void {
    this.enter({ kind: "me", conn }, frame);
  }

  /** A frame from a client reaches the agent's message handler: ordering's wrapper first, when the agent runs it. */
  private enter(sender: Sender, frame: Record<string, unknown>): void {
    if (!this.ordered) return this.handle(sender, frame);
    const handled = this.ordered.host.onMessage(this.connection(connectionId(sender)) as never, JSON.stringify(frame) as never);
    // A `setMessages` list is written after ordering's own write: a failure there must not go unseen.
    if (handled instanceof Promise) handled.catch((error: unknown) => console.error("[sim-agent] a frame failed on the ordered agent:", error));
  }

  /** `AIChatAgent#onMessage`: a frame from a client (`taken` counts this client's). */
  handle(sender: Sender, frame: Record<string, unknown>): void {
    const me = sender;
    const mine = sender.kind === "me";
    const conn = sender.kind === "me" ? sender.conn : -1;
    switch (frame.type) {
      case CHAT_MESSAGE_TYPES.USE_CHAT_REQUEST: {
        // The request's body travels as JSON in `init.body`, as a fetch would carry it.
        const body = JSON.parse(String((frame.init as { body?: unknown } | undefined)?.body ?? "{}")) as { messages?: M[] };
        if (mine) this.taken.requests++;
        return this.request(me, frame.id as string, body.messages ?? [], this.world.nextReplyShape());
      }
      case CHAT_MESSAGE_TYPES.TOOL_APPROVAL: {
        return this.toolApproval(me, frame.toolCallId as string, frame.approved === true, frame.autoContinue === true);
      }
      case CHAT_MESSAGE_TYPES.CHAT_CLEAR:
        if (mine) this.taken.clears++;
        return this.clear(me, this.world.coin());
      case CHAT_MESSAGE_TYPES.CHAT_MESSAGES:
        if (mine) this.taken.replaces++;
        return this.persist(frame.messages as M[], me, false);
      case CHAT_MESSAGE_TYPES.CHAT_REQUEST_CANCEL:
        return this.cancel(frame.id as string);
      case CHAT_MESSAGE_TYPES.TOOL_RESULT:
        return this.toolResult(me, frame.toolCallId as string, frame.output, frame.autoContinue === true);
      case CHAT_MESSAGE_TYPES.STREAM_RESUME_REQUEST:
        return this.resumeRequest(conn, frame.probeId as string | undefined);
      case CHAT_MESSAGE_TYPES.STREAM_RESUME_ACK:
        return this.resumeAck(conn, frame.id as string);
      default:
        throw new SimulationError(`the client sent an unknown frame ${String(frame.type)}`);
    }
  }

  /**
   * `persistMessages`: each message of the list is written by id (a new one
   * after the last one stored), a rewrite's list that is a subset of the
   * stored transcript drops the rest (`_deleteStaleRows`), and the other
   * clients are sent the list itself, not the transcript the server now holds.
   */
  persist(list: M[], sender: Sender | null, deleteStale: boolean): void {
    const prior = new Set(this.stored.map((message) => message.id));
    for (const message of list) {
      const index = this.stored.findIndex((candidate) => candidate.id === message.id);
      if (index >= 0) this.stored[index] = clone(message);
      else this.stored.push(clone(message));
    }
    if (deleteStale && list.every((message) => prior.has(message.id))) {
      const keep = new Set(list.map((message) => message.id));
      this.stored = this.stored.filter((message) => keep.has(message.id));
    }
    this.remember();
    this.tell(list, sender);
  }

  /**
   * Whether this client was last told (or itself sent) the transcript the
   * server holds. The server sends other clients a request's or a
   * `setMessages` list as it came, and writes it without deleting what it
   * lacks: what it holds then can differ from what any client was told until
   * a turn's end sends the whole transcript. Convergence is only promised once it was.
   */
  toldMe = true;

  private tell(list: M[], sender: Sender | null): void {
    const same = sameIds(list, this.stored);
    const reachesMe = this.open && !(sender?.kind === "me" && sender.conn === this.conn);
    if (reachesMe) this.toldMe = same;
    else if (sender?.kind === "me" && !same) this.toldMe = false;
    this.broadcast({ type: CHAT_MESSAGE_TYPES.CHAT_MESSAGES, messages: list }, sender);
  }

  /** A chat request: the server shows its list to the others, writes it, and queues the turn. */
  request(sender: Sender, requestId: string, messages: M[], shape: number): void {
    this.broadcast({ type: CHAT_MESSAGE_TYPES.CHAT_MESSAGES, messages }, sender);
    this.persist(messages, sender, true);
    this.queue.push(this.turn(requestId, sender, false, shape));
  }

  /** A turn waiting to run: its reply is the driver's script, or generated from its shape (the word count and a client tool call). */
  private turn(requestId: string, sender: Sender, continuation: boolean, shape: number): Turn {
    const replyId = this.newId("s");
    const newCallId = () => this.newId("call");
    const turn: Turn = {
      requestId,
      sender,
      continuation,
      replyId,
      plan: [],
      next: 0,
      bodies: [],
      message: { id: replyId, role: "assistant", parts: [] },
      abort: null,
      fail: null,
      failAt: null,
      script: null,
      started: false
    };
    const plan = (scripted: ScriptedReply | undefined) => {
      turn.plan = scripted ? scripted.chunks : replyPlan(replyId, shape, continuation, newCallId);
      turn.failAt = scripted?.fail ?? null;
    };
    // A driver's script is asked when the turn starts, with the transcript stored then, as `onChatMessage` reads
    // `this.messages`: a tool approval answered while the turn before it streamed is in it (the docs playground).
    const replyFor = this.world.replyFor?.bind(this.world);
    if (replyFor) turn.script = () => plan(replyFor({ requestId, replyId, continuation, messages: clone(this.stored), newCallId }));
    else plan(undefined);
    return turn;
  }

  /** `early`: the aborted turn stores its partial reply and ends before the clear is broadcast (both orders happen). */
  clear(sender: Sender, early = false): void {
    if (this.running) this.running.abort = "clear";
    for (const turn of this.queue.splice(0)) {
      this.outcomes.set(turn.requestId, "skipped");
      if (turn.sender.kind === "me" && !turn.continuation) {
        this.toConn(turn.sender.conn, { type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: turn.requestId, body: "", done: true, outcome: "skipped" });
      }
    }
    this.stored = [];
    this.remember();
    this.toldMe = true;
    this.continuationPending = null;
    this.awaitingContinuation = false;
    if (this.parked) this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_NONE });
    this.parked = false;
    this.pendingResume = false;
    if (this.running) {
      this.running.bodies = [];
      if (early) this.finish(this.running, "aborted");
    }
    this.broadcast({ type: CHAT_MESSAGE_TYPES.CHAT_CLEAR }, sender);
  }

  /** A client's `setMessages` list: written by id, nothing deleted (an ordered agent replaces the transcript with it). */
  replaceStored(sender: Sender, messages: M[]): void {
    this.enter(sender, { type: CHAT_MESSAGE_TYPES.CHAT_MESSAGES, messages });
  }

  cancel(requestId: string): void {
    if (this.running?.requestId === requestId) this.running.abort ??= "cancel";
    for (const turn of this.queue) if (turn.requestId === requestId) turn.abort ??= "cancel";
  }

  /** A tool result: the call's part gets the output, every client is told, and with autoContinue a continuation turn is queued. */
  toolResult(sender: Sender, toolCallId: string, output: unknown, autoContinue: boolean): void {
    this.answerCall(sender, toolCallId, ["input-available"], (part) => ({ ...part, state: "output-available", output }) as Part, autoContinue);
  }

  /**
   * A tool approval (`toolApprovalUpdate` in `agents/chat`): the call's part
   * awaiting input or approval becomes `approval-responded` (approved) or
   * `output-denied`, every client is told, and with autoContinue a
   * continuation turn is queued, as for a tool result.
   */
  toolApproval(sender: Sender, toolCallId: string, approved: boolean, autoContinue: boolean): void {
    this.answerCall(
      sender,
      toolCallId,
      ["input-available", "approval-requested"],
      (part) => {
        const asked = (part as { approval?: { id?: string } }).approval;
        return { ...part, state: approved ? "approval-responded" : "output-denied", approval: { ...asked, id: asked?.id ?? toolCallId, approved } } as Part;
      },
      autoContinue
    );
  }

  /** The part of a call in one of `states` (in the streaming reply, else in the stored transcript) is rewritten and sent; with autoContinue a continuation is queued. */
  private answerCall(sender: Sender, toolCallId: string, states: readonly string[], rewrite: (part: Part) => Part, autoContinue: boolean): void {
    const apply = (message: M): boolean => {
      let changed = false;
      message.parts = message.parts.map((part) => {
        const call = part as { toolCallId?: string; state?: string };
        if (call.toolCallId !== toolCallId || !states.includes(call.state ?? "")) return part;
        changed = true;
        return rewrite(part);
      });
      return changed;
    };
    const streaming = this.running?.started ? this.running.message : null;
    let holder: M | undefined;
    if (streaming && apply(streaming)) holder = streaming;
    else {
      holder = this.stored.find((message) => apply(message));
      if (holder) this.remember();
    }
    // Sent to every client, the one that answered too.
    if (holder && this.ordered) this.broadcast({ type: CHAT_MESSAGE_TYPES.MESSAGE_UPDATED, message: holder }, null);
    else if (holder) this.toMe({ type: CHAT_MESSAGE_TYPES.MESSAGE_UPDATED, message: holder });
    if (!autoContinue) return;
    const requestId = this.newId("c");
    this.continuationPending = { requestId, owner: sender };
    // The message it extends is decided once the turn runs (the call's own turn may still stream); it calls no tool.
    this.queue.push(this.turn(requestId, sender, true, this.world.nextReplyShape() & ~4));
  }

  private resumeRequest(conn: number, probeId: string | undefined): void {
    if (conn !== this.conn) return;
    const active = this.activeTurn();
    const withProbe = probeId ? { probeId } : {};
    if (active) {
      const owner = this.continuationActive;
      if (owner && owner.requestId === active.requestId && this.ownerElsewhere(owner.owner)) {
        this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_NONE, reason: "continuation-owned", ...withProbe });
      } else this.notifyResuming(probeId);
    } else if (this.continuationPending && this.ownerHere(this.continuationPending.owner)) {
      this.awaitingContinuation = true;
      this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_PENDING, id: this.continuationPending.requestId, ...withProbe });
    } else if (this.accepted()) {
      this.parked = true;
      const latest = [...this.queue, ...(this.running ? [this.running] : [])].findLast((turn) => !turn.continuation);
      this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_PENDING, ...(latest ? { id: latest.requestId } : {}), ...withProbe });
    } else {
      this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_NONE, reason: "idle", ...withProbe });
    }
  }

  /** The continuation's owner is another client, or this client's connection that is still open. */
  private ownerElsewhere(owner: Sender): boolean {
    return owner.kind === "other";
  }

  private ownerHere(owner: Sender): boolean {
    return owner.kind === "me";
  }

  private notifyResuming(probeId?: string): void {
    const active = this.activeTurn();
    if (!active || !this.open) return;
    this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_RESUMING, id: active.requestId, ...(probeId ? { probeId } : {}) });
    this.pendingResume = true;
  }

  private resumeAck(conn: number, requestId: string): void {
    if (conn !== this.conn) return;
    this.pendingResume = false;
    const active = this.activeTurn();
    if (active && active.requestId === requestId) {
      const continuation = active.continuation ? { continuation: true } : {};
      active.bodies.forEach((body, seq) => this.toMe({ type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: requestId, body, done: false, replay: true, seq, ...continuation }));
      this.toMe({ type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: requestId, body: "", done: false, replay: true, replayComplete: true, ...continuation });
      return;
    }
    if (active) return;
    const outcome = this.outcomes.get(requestId);
    this.toMe({ type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: requestId, body: "", done: true, replay: true, ...(outcome ? { outcome } : {}) });
  }

  /** This client's connection opened: a running stream is offered on it (an ordered agent sends its transcript first). */
  connected(conn: number): void {
    this.conn = conn;
    this.open = true;
    this.pendingResume = this.parked = this.awaitingContinuation = false;
    if (this.ordered) this.ordered.host.onConnect(this.connection(connectionId({ kind: "me", conn })) as never, {} as never);
    else this.onConnect();
  }

  /** `AIChatAgent#onConnect`: a running stream is offered. */
  onConnect(): void {
    if (this.activeTurn()) this.notifyResuming();
  }

  disconnected(): void {
    this.open = false;
    this.pendingResume = this.parked = this.awaitingContinuation = false;
  }

  // ── Turns ──

  /** Advances the turns by one step: starts the next, streams one chunk, or ends the running one. */
  step(): boolean {
    const turn = this.running;
    if (!turn) {
      const next = this.queue.shift();
      if (!next) return false;
      this.running = next;
      if (next.abort) {
        this.finish(next, "aborted");
        return true;
      }
      next.started = true;
      next.script?.();
      next.script = null;
      if (next.continuation) {
        // A continuation extends the last assistant message, wherever it stands (`_createStreamingAssistantMessage`), else starts one.
        const last = this.stored.findLast((message) => message.role === "assistant");
        if (last) next.message = clone(last);
      }
      if (next.continuation && this.continuationPending?.requestId === next.requestId) {
        this.continuationActive = this.continuationPending;
        this.continuationPending = null;
        if (this.awaitingContinuation) this.notifyResuming();
        this.awaitingContinuation = false;
      }
      if (this.parked) this.notifyResuming();
      this.parked = false;
      return true;
    }
    if (turn.abort) {
      this.finish(turn, "aborted");
      return true;
    }
    if (turn.failAt && turn.next >= turn.failAt.after) turn.fail ??= turn.failAt.how;
    if (turn.fail) {
      this.finish(turn, "error");
      return true;
    }
    const chunk = turn.plan[turn.next];
    if (!chunk) {
      this.finish(turn, "completed");
      return true;
    }
    const seq = turn.next++;
    const body = JSON.stringify(chunk);
    turn.bodies.push(body);
    applyToStored(turn.message, chunk);
    this.toMe({ type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: turn.requestId, body, done: false, seq, ...(turn.continuation ? { continuation: true } : {}) }, true);
    return true;
  }

  private finish(turn: Turn, outcome: "completed" | "aborted" | "error"): void {
    this.running = null;
    this.pendingResume = false;
    if (this.continuationActive?.requestId === turn.requestId) this.continuationActive = null;
    if (this.continuationPending?.requestId === turn.requestId) this.continuationPending = null;
    if (turn.started && turn.message.parts.length > 0) {
      const index = this.stored.findIndex((message) => message.id === turn.message.id);
      const whole = clone(this.stored);
      if (index >= 0) whole[index] = clone(turn.message);
      else whole.push(clone(turn.message));
      this.persist(whole, turn.sender, false);
    }
    this.outcomes.set(turn.requestId, outcome);
    const continuation = turn.continuation ? { continuation: true } : {};
    const base = { type: CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE, id: turn.requestId, ...continuation };
    const failure = turn.failAt?.message ?? "boom";
    if (outcome === "error" && turn.fail === "thrown") {
      this.toMe({ ...base, body: failure, done: true, error: true });
    } else if (outcome === "error") {
      this.toMe({ ...base, body: failure, done: false, error: true });
      this.toMe({ ...base, body: "", done: true, outcome: "error" });
    } else {
      this.toMe({ ...base, body: "", done: true, outcome });
    }
    if (this.parked && !this.accepted() && !this.activeTurn()) {
      this.parked = false;
      this.toMe({ type: CHAT_MESSAGE_TYPES.STREAM_RESUME_NONE });
    }
  }
}

function sameIds(a: readonly M[], b: readonly M[]): boolean {
  return a.length === b.length && a.every((message, index) => message.id === b[index]!.id);
}
