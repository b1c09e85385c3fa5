import { decodeSocketFrame } from "../../src/core/frames";
import type { TranscriptRead } from "../../src/core/model/base";
import { readAnswered } from "../../src/core/model/transcript-rules";
import { type Down, SimAgent } from "./world/agent";
import { SimClient } from "./world/client";
import { type Command, GAPS, type M, WorldError, type WorldOptions, type WorldPort, clone } from "./world/shared";

export { type Command, GAPS, type WorldOptions, WorldError } from "./world/shared";

/**
 * A whole conversation in one synchronous process, for the model's property
 * test: a simulated `AIChatAgent` (stored transcript, serialized turns,
 * broadcasts, resumable streams, the resume handshake), the network between it
 * and this client (one ordered frame channel each way, transcript reads on
 * another connection), other clients reduced to what they make the server do,
 * and this client: a simulated AI SDK chat and transport, under a mirror of
 * `src/core/session.ts` that routes every event into the model's rules.
 *
 * Each `Command` is one task (a socket frame, a read answer, a user action, a
 * timer); promise continuations and queued microtasks run after it, in order.
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
}

interface Timer {
  name: string;
  run: () => void;
}

/** What this client's user sent, to tell a lost message from one a clear or rewrite removed. */
interface SentRecord {
  id: string;
  /** A reset (a clear) dropped it while it was queued. */
  dropped: boolean;
}

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

export class World implements WorldPort {
  readonly down: Down[] = [];
  readonly up: Array<{ conn: number; frame: Record<string, unknown> }> = [];
  /** Frames sent while the socket was closed: PartySocket sends them once it opens. */
  private readonly buffered: Array<Record<string, unknown>> = [];
  readonly reads: OpenRead[] = [];
  readonly timers: Timer[] = [];
  private readonly microtasks: Array<() => void> = [];
  readonly server: SimAgent;
  readonly client: SimClient;
  readonly sent: SentRecord[] = [];
  readonly log: string[] = [];
  /**
   * Why this client's transcript need not match the server's now: what the
   * real system does not promise. A later transcript frame carrying the
   * whole stored transcript (not itself stale) settles them.
   */
  readonly unpromised = new Set<string>();
  /** Open counterexamples the lead decides on (see `GAPS`): a run that hits one is not held to convergence. */
  readonly gaps = new Set<string>();

  gap(name: keyof typeof GAPS): void {
    this.gaps.add(name);
  }

  /** Another tab's list from before this client's clear writes back what the clear removed (see `GAPS`). */
  private writesBackCleared(list: readonly M[]): void {
    const held = this.client.model.intents.clear?.cleared;
    if (held && list.some((message) => held.has(message.id))) this.gap("stale-list-restores-cleared");
  }

  /** Whether this client shows the message, or a frame on its way brings it. */
  mayShow(id: string): boolean {
    return this.client.list.messages.some((message) => message.id === id) || this.down.some((down) => JSON.stringify(down.frame).includes(`"${id}"`));
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
  /** This client's clears, and whether each was made with the socket down (then nothing holds back stale broadcasts). */
  private readonly clears: boolean[] = [];
  open = false;
  conn = 0;
  private ids = 0;
  private shapes = 0;
  private readonly random: () => number;

  constructor(readonly options: WorldOptions & { seed: number; trace?: boolean }) {
    this.random = generator(options.seed);
    this.server = new SimAgent(this, this.down);
    this.client = new SimClient(this, options);
    this.reopen();
    this.settle();
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

  microtask(run: () => void): void {
    this.microtasks.push(run);
  }

  /** A zero-delay timer (a task); `late`: a timeout of seconds, which fires only once nothing else happens. */
  setTimer(name: string, run: () => void, late = false): () => void {
    (late ? this.lateTimers : this.timers).push({ name, run });
    return run;
  }

  clearTimer(handle: () => void): void {
    for (const timers of [this.timers, this.lateTimers]) {
      const index = timers.findIndex((timer) => timer.run === handle);
      if (index >= 0) timers.splice(index, 1);
    }
  }

  readonly lateTimers: Timer[] = [];

  /** Frames this client sent, and how many of them the server took. */
  private upSent = 0;
  private upTaken = 0;

  clientSend(frame: Record<string, unknown>): boolean {
    if (this.open) {
      this.upSent++;
      this.up.push({ conn: this.conn, frame: clone(frame) });
      return true;
    }
    this.buffered.push(clone(frame));
    return false;
  }

  startRead(read: TranscriptRead, first: boolean): void {
    this.reads.push({ read, first, answer: undefined, after: this.upSent, behind: 0 });
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

  droppedByReset(id: string): void {
    const record = this.sent.find((entry) => entry.id === id);
    if (record) record.dropped = true;
  }

  /** Runs the microtasks the last task queued, in order. */
  settle(): void {
    let budget = 100_000;
    while (this.microtasks.length > 0) {
      if (--budget === 0) throw new WorldError("microtasks never settle");
      this.microtasks.shift()!();
    }
  }

  // ── Tasks ──

  run(command: Command): void {
    this.log.push(JSON.stringify(command));
    this.apply(command);
    this.settle();
    // A reply under an id the AI SDK or the observer made up: no server message has it.
    if (this.client.list.messages.some((message) => message.role === "assistant" && message.id.startsWith("g") && message.parts.length > 0)) this.gap("reply-under-own-id");
    if (this.options.trace) {
      const m = this.client.model;
      this.log.push(
        `    screen [${idsOf(this.client.list.messages).join(",")}] server [${idsOf(this.server.stored).join(",")}] status ${this.client.chat.status} observed ${m.observed.streamId}/${m.observed.message?.id} local [${[...this.client.local].join(",")}] hold ${m.intents.clear ? `[${[...m.intents.clear.arrived].join(",")}]` : "-"}`
      );
    }
  }

  private apply(command: Command): void {
    const client = this.client;
    const server = this.server;
    switch (command.kind) {
      case "send": {
        const message: M = { id: this.newId("u"), role: "user", parts: [{ type: "text", text: `hello ${this.ids}` }] };
        this.sent.push({ id: message.id, dropped: false });
        client.sendMessage(message);
        return;
      }
      case "stop":
        for (const id of client.local) {
          const reply = client.model.streams.get(id)?.replyId;
          if (reply !== undefined) this.stoppedReplies.add(reply);
        }
        if (client.chat.activeResponse) this.stoppedReplies.add(client.chat.activeResponse.state.message.id);
        return client.stop();
      case "regenerate":
        if (client.list.messages.length > 0) client.regenerate();
        return;
      case "edit": {
        const users = client.list.messages.filter((message) => message.role === "user");
        const target = users[command.pick % Math.max(users.length, 1)];
        if (target) client.sendMessage({ id: target.id, role: "user", parts: [{ type: "text", text: `edited ${this.ids++}` }], messageId: target.id });
        return;
      }
      case "clear":
        this.clears.push(!this.open);
        return client.clearHistory();
      case "setMessages": {
        const messages = client.list.messages;
        if (client.chat.activeResponse && !client.chat.activeResponse.ended) this.gap("rewrite-during-own-request");
        this.replaces++;
        return client.setMessages(clone(messages.slice(0, command.pick % (messages.length + 1))));
      }
      case "toolOutput": {
        const calls = pendingCalls(client.list.messages).filter((id) => !client.model.tools.results.has(id));
        const toolCallId = calls[command.pick % Math.max(calls.length, 1)];
        if (toolCallId) client.tools.addToolOutput({ toolCallId, toolName: "ask", output: { answer: toolCallId } });
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
        // Each frame is a task of its own: the microtasks it queues run before the next one.
        for (let i = 0; i < command.count && this.down.length > 0; i++) {
          this.deliverOne();
          this.settle();
        }
        return;
      case "serveRead": {
        const waiting = this.reads.filter((read) => this.servable(read));
        const read = waiting[command.pick % Math.max(waiting.length, 1)];
        if (read) {
          read.answer = clone(server.stored);
          read.behind = server.framesSent;
        }
        return;
      }
      case "answerRead": {
        const answered = this.reads.filter((read) => this.answerable(read));
        const read = answered[command.pick % Math.max(answered.length, 1)];
        if (read) this.answer(read);
        return;
      }
      case "cut":
        return this.cut();
      case "reopen":
        return this.reopen();
      case "timer": {
        const timer = this.timers.shift();
        timer?.run();
        return;
      }
    }
  }

  /** The transcript another client acts on: the server's, or one it held a little earlier (its broadcasts still travel). */
  private view(stale: number): M[] {
    const history = this.server.history;
    return clone(history[Math.max(0, history.length - 1 - (stale % 3))]!);
  }

  private deliverOne(): void {
    const next = this.down.shift()!;
    if (next.conn !== this.conn || !this.open) return;
    const data = JSON.stringify(next.frame);
    this.log.push(`  ⇣ ${data.length > 300 ? `${data.slice(0, 300)}…` : data}`);
    const frame = decodeSocketFrame<M>(data, undefined, (key) => {
      throw new WorldError(`the server sent a frame the client rejects: ${key}`);
    });
    if (!frame) return;
    if (frame.kind === "response" && frame.done) this.ended.add(frame.id);
    const c = this.client.model.continuation;
    if (frame.kind === "resuming" && c.kind === "cancel-on-start" && c.requestId === null && frame.probeId === c.probeId) {
      if (this.client.model.observed.streamId === frame.id || this.client.local.has(frame.id)) this.gap("stopped-continuation-unnamed");
    }
    // Nothing holds a `setMessages` list against an older broadcast (upstream neither): such runs promise no convergence.
    const stale = next.replacesTaken < this.replaces || next.clearsTaken < this.clears.length;
    if (frame.kind === "messages" && next.whole && !stale && this.client.model.intents.clear === null && this.client.model.intents.rewrite === null) this.unpromised.clear();
    if (frame.kind === "messages" || frame.kind === "message-updated") {
      if (next.replacesTaken < this.replaces) this.unpromised.add("a transcript frame the server sent before it took this client's setMessages arrived after it");
      // A clear made offline holds nothing back (it needs an open socket so that the clear reaches the server before its read).
      if (this.clears.slice(next.clearsTaken).includes(true)) this.unpromised.add("a transcript frame the server sent before it took this client's offline clear arrived after it");
    }
    this.client.onSocketData(frame);

  }

  private answer(open: OpenRead): void {
    this.reads.splice(this.reads.indexOf(open), 1);
    this.log.push(`  read ${open.read.id} answered: [${idsOf(open.answer!).join(",")}]`);
    const answer = open.answer!;
    const admitted = open.first ? this.client.model.base.admitFirst(open.read, true) : this.client.model.base.admit(open.read, true) === "admit";
    const held = this.client.model.intents.clear !== null;
    if (open.first) this.client.firstReadAnswered(open.read, answer);
    else readAnswered(this.client.model, open.read, answer);
    // Documented: a clear's hold ends without its read when setMessages replaced the transcript, or frames kept overtaking the read; what it held back stays out.
    if (held && this.client.model.intents.clear === null && !admitted) this.unpromised.add("a clear's hold ended without an admitted read");
    // The merge keeps what only the screen has (`mergeStoredWins`, `prependMissing`): also what the server removed meanwhile.
    const kept = new Set(answer.map((message) => message.id));
    const unconfirmed = this.client.model.intents.unechoed;
    const removedMeanwhile = (id: string) => this.server.everHeld.has(id) && !this.server.stored.some((stored) => stored.id === id);
    if (admitted && this.client.list.messages.some((message) => !kept.has(message.id) && !unconfirmed.has(message.id) && removedMeanwhile(message.id))) {
      this.unpromised.add("a read's merge kept messages only on screen that the server no longer holds");
    }
  }

  private cut(): void {
    if (!this.open) return;
    const c = this.client.model.continuation;
    // The stop's probe gets its answer on the socket that sent it, and nothing asks again.
    if (c.kind === "cancel-on-start" && c.requestId === null) this.gap("stopped-continuation-unnamed");
    this.open = false;
    this.server.disconnected();
    this.down.length = 0;
    this.client.onSocketClose();
  }

  private reopen(): void {
    if (this.open) return;
    this.open = true;
    this.conn++;
    this.server.connected(this.conn);
    for (const frame of this.buffered.splice(0)) {
      this.upSent++;
      this.up.push({ conn: this.conn, frame });
    }
    this.client.onSocketOpen();
  }

  /** Runs everything that is pending until nothing is: all frames delivered, reads answered, turns ended. */
  quiesce(): void {
    let budget = 20_000;
    const step = (command: Command) => {
      if (--budget === 0) throw new WorldError("the world never quiesces");
      this.run(command);
    };
    for (;;) {
      if (!this.open) step({ kind: "reopen" });
      else if (this.timers.length > 0) step({ kind: "timer", pick: 0 });
      else if (this.down.length > 0) step({ kind: "deliver", count: 1 });
      else if (this.up.length > 0) step({ kind: "serverUp" });
      else if (this.reads.some((read) => this.servable(read))) step({ kind: "serveRead", pick: 0 });
      else if (this.reads.some((read) => this.answerable(read))) step({ kind: "answerRead", pick: 0 });
      else if (this.server.running || this.server.queue.length > 0) step({ kind: "serverTurn" });
      else if (this.lateTimers.length > 0) {
        if (--budget === 0) throw new WorldError("the world never quiesces");
        const timer = this.lateTimers.shift()!;
        this.log.push(`  ⏰ ${timer.name}`);
        timer.run();
        this.settle();
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

const textOf = (message: M) =>
  message.parts
    .map((part) => (part.type === "text" ? part.text : String(part.type).startsWith("tool-") ? `[${String((part as { toolCallId?: string }).toolCallId)}]` : ""))
    .join("|");

// ─── Invariants at quiescence ───────────────────────────────────────────

/** What went wrong at quiescence; empty when every invariant holds. */
/**
 * What went wrong at quiescence; empty when every invariant holds. `strict`
 * also holds a run to what an open counterexample (`GAPS`) breaks;
 * `promisedOnly: false` also to what the real system does not promise.
 */
export function violations(world: World, strict = false, promisedOnly = true): string[] {
  const problems: string[] = [];
  const client = world.client;
  const m = client.model;
  const screen = client.list.messages;
  const stored = world.server.stored;
  const shown = idsOf(screen);
  const held = idsOf(stored);
  const duplicates = shown.filter((id, index) => shown.indexOf(id) !== index);
  if (duplicates.length > 0) problems.push(`shown twice: ${duplicates.join(", ")}`);
  if (!world.server.toldMe) world.unpromised.add("the server holds a transcript it never sent this client (it sends a client's list as it came)");
  const relaxed = (promisedOnly && world.unpromised.size > 0) || (!strict && world.gaps.size > 0);
  if (relaxed) {
    // Not promised: only what must hold anyway is checked below.
  } else if (shown.join(",") !== held.join(",")) problems.push(`screen [${shown.join(",")}] is not the server's [${held.join(",")}]`);
  else {
    for (let i = 0; i < stored.length; i++) {
      const shownText = textOf(screen[i]!);
      const storedText = textOf(stored[i]!);
      // Not promised: stop() keeps the text a reply had (test/e2e/foundation.test.ts), while the server stores what it streamed until it took the cancel.
      const frozen = promisedOnly && world.stoppedReplies.has(stored[i]!.id) && storedText.startsWith(shownText);
      if ((shownText !== storedText && !frozen) || screen[i]!.role !== stored[i]!.role) {
        problems.push(`${stored[i]!.id} shows "${textOf(screen[i]!)}", the server holds "${textOf(stored[i]!)}"`);
      }
    }
  }
  for (const record of world.sent) {
    if (!record.dropped && !shown.includes(record.id) && !world.server.everHeld.has(record.id)) problems.push(`sent message ${record.id} was lost`);
  }
  // One open counterexample leaves a request of this client's hanging.
  if (world.gaps.has("probe-takes-own-request") && !strict) return problems;
  const stuck: Array<[string, unknown, unknown]> = [
    ["status", client.chat.status === "ready" || client.chat.status === "error", true],
    ["observed turn", m.observed.active, false],
    ["clear hold", m.intents.clear, null],
    ["rewrite", m.intents.rewrite, null],
    ["continuation", world.gaps.has("stopped-continuation-unnamed") && !strict ? "idle" : m.continuation.kind, "idle"],
    ["queued", m.intents.queued.length, 0],
    ["sending", m.intents.sending, false],
    ["unechoed", m.intents.unechoed.size, 0],
    // Not checked: `buffered` (#1983) retires with the next transcript frame, which a sender of its own turn may never get.
    ["held turn", m.streams.heldTurn, null],
    ["recovering turn", m.streams.recoveringTurn, null],
    ["deferred ends", m.streams.deferredEnds.length, 0],
    ["protected reply", m.placement.protectedId, undefined],
    ["pin", m.placement.pin, null],
    // A stopped request's id stays with the transport until its done frame, which a closed connection never gets.
    ["local requests", [...client.local].filter((id) => world.ended.has(id) || !world.lostEnd(id)).length, 0],
    ["resume running", client.resumeRunning, false],
    ["active response", client.chat.activeResponse !== null || client.chat.activeResume !== null, false],
    ["serverStreaming", client.flags.serverStreaming, false],
    ["toolContinuation", client.flags.toolContinuation, false],
    ["reconnect probe owed", m.probes.reconnect, false],
    ["idle probe out", m.probes.idleId, null]
  ];
  for (const [name, actual, expected] of stuck) if (actual !== expected) problems.push(`stuck: ${name} is ${JSON.stringify(actual)}`);
  for (const id of world.ended) {
    const record = m.streams.get(id);
    if (!record) continue;
    const open = (["replyId", "acked", "unreplayed", "stopped", "replayPending", "interruptedByClear", "error"] as const).filter((key) => record[key] !== undefined && record[key] !== false);
    if (open.length > 0) problems.push(`stream record ${id} left open: ${open.join(", ")}`);
  }
  return problems;
}

