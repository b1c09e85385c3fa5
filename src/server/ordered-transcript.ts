import type { UIMessage } from "ai";
import { installingMixin, type HostClass } from "./mixin";
import {
  CHAT_CLEAR,
  CHAT_MESSAGES,
  MESSAGE_UPDATED,
  SNAPSHOT_REQUEST,
  type VersionedMessagesFrame
} from "./ordered-wire";

type SqlValue = string | number | boolean | null;

/** A socket, as an agent's hooks and `getConnection` hand it out. */
export interface OrderedConnection {
  readonly id: string;
  send(message: string): void;
}

/** What ordering needs from an agent; an `AIChatAgent` has all of it. */
export interface OrderedTranscriptHost {
  /** The stored transcript (`AIChatAgent#messages`, mirrored from storage). */
  messages: UIMessage[];
  /** The Durable Object's SQLite (`Agent#sql`), where the version is kept. */
  sql<T = Record<string, SqlValue>>(strings: TemplateStringsArray, ...values: SqlValue[]): T[];
  /** `Agent#broadcast`: every transcript frame of the agent goes out through it. */
  broadcast(message: string | ArrayBuffer | ArrayBufferView, without?: string[]): void;
  /** `Agent#getConnection`, to reach the sockets a broadcast leaves out. */
  getConnection(id: string): OrderedConnection | undefined;
  /** The connect hook (`Agent#onConnect`, wrapped by the agent's constructors). */
  onConnect(connection: never, ctx: never): unknown;
  /** The WebSocket message handler (`Agent#onMessage`, wrapped likewise). */
  onMessage(connection: never, message: never): unknown;
  /**
   * `AIChatAgent#persistMessages`: writes messages, then broadcasts the
   * transcript. Ordering uses it to remove the messages a client's
   * `setMessages` list leaves out (see {@link orderTranscript}).
   */
  persistMessages(messages: UIMessage[], excludeBroadcastIds?: string[], options?: { _deleteStaleRows?: boolean }): Promise<void>;
}

// ── Internals of agents 0.32.0 and @cloudflare/ai-chat 0.12.2 ───────────────
// Each dependency on something not documented sits here, once.

/**
 * agents 0.32.0: `Agent#_cf_requestTargetsSubAgent(request)` and
 * `Agent#_cf_connectionTargetsSubAgent(connection)` (protected) tell a socket
 * that belongs to a sub-agent (facet) apart; `AIChatAgent` checks them before
 * speaking the chat protocol, and so does ordering, so a facet's sockets get
 * their transcript from the facet. Absent methods mean no sub-agents.
 */
interface SubAgentRouting {
  _cf_requestTargetsSubAgent?(request: unknown): boolean;
  _cf_connectionTargetsSubAgent?(connection: unknown): boolean;
}

function connectTargetsSubAgent(agent: object, ctx: unknown): boolean {
  const routing = agent as SubAgentRouting;
  const request = (ctx as { request?: unknown } | undefined)?.request;
  return typeof routing._cf_requestTargetsSubAgent === "function" && request !== undefined
    ? routing._cf_requestTargetsSubAgent(request) === true
    : false;
}

function connectionTargetsSubAgent(agent: object, connection: unknown): boolean {
  const routing = agent as SubAgentRouting;
  return typeof routing._cf_connectionTargetsSubAgent === "function"
    ? routing._cf_connectionTargetsSubAgent(connection) === true
    : false;
}

// @cloudflare/ai-chat 0.12.2 sends every transcript frame (`persistMessages`,
// the echo of a chat request, clear, tool results and approvals) through
// `this.broadcast(JSON.stringify(frame), without)` from `_broadcastChatMessage`,
// where `without` holds the sockets it leaves out (the sender, and sockets
// waiting to ACK a resume: `_pendingResumeConnections`). Ordering wraps the
// public `broadcast`, so it reads that list without touching the private one.
// The one transcript frame sent another way is the rollback of a submit
// dropped by `messageConcurrency: "drop"` (`_rollbackDroppedSubmit`, a direct
// `connection.send` to the sender): it goes out without a version.

// A client's `cf_agent_chat_messages` (`setMessages`) is written by
// `persistMessages(list, [sender])`, which adds and updates only: messages the
// list leaves out stay stored, while the broadcast carries the list. To make
// it a replacement, ordering first calls `persistMessages(kept, [], {
// _deleteStaleRows: true })` (the option is marked internal; `AIChatAgent`
// passes it for chat requests): with every message it is given already
// stored, it deletes the stored messages it is not given, then broadcasts.

/** Writes `kept` (all of them stored already) and deletes every other stored message, then broadcasts the result. */
function persistOnly(agent: OrderedTranscriptHost, kept: UIMessage[]): Promise<void> {
  return agent.persistMessages(kept, [], { _deleteStaleRows: true });
}

// ── The version ─────────────────────────────────────────────────────────────

/** Marks a statement run for its effect (`Agent#sql` runs when the tag is applied). */
const effect = (_rows: unknown[]): void => {};

/** The version row, in the agent's own SQLite; one row, id 0. */
class StoredVersion {
  #current: number;

  readonly #agent: OrderedTranscriptHost;
  constructor(agent: OrderedTranscriptHost) {
    this.#agent = agent;
    effect(agent.sql`create table if not exists agents_vue_transcript_version (
      id integer primary key,
      version integer not null
    )`);
    const [row] = agent.sql<{ version: number }>`select version from agents_vue_transcript_version where id = 0`;
    this.#current = row && Number.isSafeInteger(row.version) && row.version > 0 ? row.version : 0;
  }

  get value(): number {
    return this.#current;
  }

  /**
   * One more, written before any frame carries it: the Durable Object's
   * output gate holds the frame until the write is durable, so no client
   * sees a version that a restart could hand out again.
   */
  advance(): number {
    this.#current += 1;
    try {
      effect(this.#agent.sql`insert into agents_vue_transcript_version (id, version) values (0, ${this.#current})
        on conflict(id) do update set version = excluded.version`);
    } catch (error) {
      console.error("[agents-vue] orderTranscript: could not store the transcript version", error);
    }
    return this.#current;
  }
}

// ── Frames ──────────────────────────────────────────────────────────────────

type TranscriptFrame =
  | { type: typeof CHAT_MESSAGES; messages: UIMessage[]; [field: string]: unknown }
  | { type: typeof MESSAGE_UPDATED; message: UIMessage; [field: string]: unknown }
  | { type: typeof CHAT_CLEAR; [field: string]: unknown };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The transcript frame a broadcast carries, or undefined for every other message. */
function transcriptFrameOf(message: unknown): TranscriptFrame | undefined {
  // Stream chunks (the bulk of broadcasts) name neither type, so most
  // messages are never parsed.
  if (typeof message !== "string") return undefined;
  if (!message.includes(`"${CHAT_MESSAGES}"`) && !message.includes(`"${MESSAGE_UPDATED}"`) && !message.includes(`"${CHAT_CLEAR}"`)) {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  if (data.type === CHAT_MESSAGES && Array.isArray(data.messages)) return data as TranscriptFrame;
  if (data.type === MESSAGE_UPDATED && isRecord(data.message)) return data as TranscriptFrame;
  if (data.type === CHAT_CLEAR) return data as TranscriptFrame;
  return undefined;
}

/** `raw` with `version` added; spliced in, so a large transcript is not encoded twice. */
function stamp(raw: string, frame: TranscriptFrame, version: number): string {
  if (!("version" in frame) && raw.endsWith("}")) return `${raw.slice(0, -1)},"version":${version}}`;
  return JSON.stringify({ ...frame, version });
}

/** The transcript after `updated` replaces its namesake, as a client applies the update. */
function withUpdate(messages: readonly UIMessage[], updated: UIMessage): UIMessage[] {
  return messages.map((message) => (message.id === updated.id ? updated : message));
}

function messagesFrame(messages: UIMessage[], version: number, extra?: { connect: true } | { snapshot: string }): string {
  const frame: VersionedMessagesFrame<UIMessage> = { type: CHAT_MESSAGES, messages, version, ...extra };
  return JSON.stringify(frame);
}

/** The list a client's `cf_agent_chat_messages` (its `setMessages`) carries, or undefined for every other message. */
function replacementOf(message: unknown): UIMessage[] | undefined {
  if (typeof message !== "string" || !message.includes(`"${CHAT_MESSAGES}"`)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!isRecord(data) || data.type !== CHAT_MESSAGES || !Array.isArray(data.messages)) return undefined;
  return data.messages.every((item) => isRecord(item) && typeof item.id === "string") ? (data.messages as UIMessage[]) : undefined;
}

const idsOf = (messages: readonly unknown[]): string => JSON.stringify(messages.map((message) => (isRecord(message) ? message.id : undefined)));

/** The id of a snapshot request, `null` for one without a usable id, undefined for other messages. */
function snapshotRequestOf(message: unknown): string | null | undefined {
  if (typeof message !== "string" || !message.includes(SNAPSHOT_REQUEST)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!isRecord(data) || data.type !== SNAPSHOT_REQUEST) return undefined;
  return typeof data.id === "string" ? data.id : null;
}

function sendTo(connection: OrderedConnection | undefined, frame: string): void {
  try {
    connection?.send(frame);
  } catch {
    // The socket closed before the frame went out; it reads the transcript when it reconnects.
  }
}

// ── The server half ─────────────────────────────────────────────────────────

const ordered = new WeakSet<object>();

/**
 * Makes an `AIChatAgent` speak exact sync: its stored transcript gets a
 * version that goes up by one with every change (kept in the agent's
 * SQLite, so it survives eviction and restarts), every transcript frame
 * carries the version it brings the socket to, the sockets a broadcast
 * leaves out (the sender, sockets waiting to ACK a resume) get the full
 * transcript at that version instead, each new socket first gets the
 * stored transcript with its version (`connect: true`), and a
 * `agents_vue_snapshot_request` is answered at once with the transcript
 * and version read together, and a client's `setMessages` list replaces
 * the stored transcript (the stock agent only adds and updates). Call it
 * in the constructor, after `super()`:
 *
 * ```ts
 * export class ChatAgent extends AIChatAgent<Env> {
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env);
 *     orderTranscript(this);
 *   }
 * }
 * ```
 *
 * Clients that do not know versions see upstream's frames with extra
 * fields, which they ignore.
 */
export function orderTranscript(agent: OrderedTranscriptHost): void {
  if (ordered.has(agent)) {
    console.warn("[agents-vue] orderTranscript: this agent is already ordered; the second call is ignored");
    return;
  }
  ordered.add(agent);
  const version = new StoredVersion(agent);

  const broadcast = agent.broadcast.bind(agent);
  agent.broadcast = (message, without) => {
    const frame = transcriptFrameOf(message);
    if (!frame) {
      broadcast(message, without);
      return;
    }
    // Read before the frame goes out: a message update is applied to the
    // transcript as it stands now.
    const stored = agent.messages;
    const next = version.advance();
    // Rule (a whole frame is the stored transcript): `AIChatAgent` sends a
    // list as it came (a chat request's before and after writing it, a
    // client's setMessages), and writes it without deleting what it lacks, so
    // the list can lack what the agent stores (another client's message the
    // sender had not seen). At a version, a client takes a whole frame for the
    // transcript: it goes as the agent stores it.
    const whole = frame.type !== CHAT_MESSAGES || idsOf(frame.messages) === idsOf(stored);
    const stamped = whole ? stamp(message as string, frame, next) : messagesFrame(stored, next);
    broadcast(stamped, without);
    if (without && without.length > 0) {
      // The sockets left out get the whole transcript at this version, never a
      // partial frame they might not be able to apply.
      const catchUp =
        frame.type === CHAT_MESSAGES
          ? stamped
          : messagesFrame(frame.type === CHAT_CLEAR ? [] : withUpdate(stored, frame.message as UIMessage), next);
      for (const id of new Set(without)) sendTo(agent.getConnection(id), catchUp);
    }
    // A clear that interrupted a turn: `AIChatAgent` stored the turn's partial
    // reply after it emptied the transcript and before it broadcast the clear.
    // The next version says what is stored, to every socket.
    if (frame.type === CHAT_CLEAR && stored.length > 0) broadcast(messagesFrame(stored, version.advance()));
  };

  const onConnect = agent.onConnect.bind(agent) as (connection: unknown, ctx: unknown) => unknown;
  agent.onConnect = ((connection: OrderedConnection, ctx: unknown) => {
    // First, before the resume offer: the client's base, in one step with its version.
    if (!connectTargetsSubAgent(agent, ctx)) {
      sendTo(connection, messagesFrame(agent.messages, version.value, { connect: true }));
    }
    return onConnect(connection, ctx);
  }) as OrderedTranscriptHost["onConnect"];

  const onMessage = agent.onMessage.bind(agent) as (connection: unknown, message: unknown) => unknown;

  /**
   * Rule (setMessages is a replacement): a client's list replaces the stored
   * transcript. The stored messages it leaves out are deleted first (every
   * socket, the sender's too, gets what is left at the next version); the
   * agent then writes the list as usual (added and changed messages, at the
   * version after). If the agent stores something else than the list (it
   * renamed a message, or keeps its own order), that version carries what it
   * stores (rule: a whole frame is the stored transcript): the sender never
   * keeps a transcript the server does not hold.
   */
  const replace = async (connection: OrderedConnection, message: unknown, list: UIMessage[]): Promise<unknown> => {
    const listed = new Set(list.map((item) => item.id));
    const stored = agent.messages;
    const kept = stored.filter((item) => listed.has(item.id));
    if (kept.length < stored.length) {
      try {
        await persistOnly(agent, kept);
      } catch (error) {
        console.error("[agents-vue] orderTranscript: could not remove the messages a setMessages list left out", error);
      }
      // A list that only removes: the one version says it all.
      if (JSON.stringify(agent.messages) === JSON.stringify(list)) return undefined;
    }
    // The agent writes the list and broadcasts it: what it stores goes (rule: a whole frame is the stored transcript).
    return onMessage(connection, message);
  };

  agent.onMessage = ((connection: OrderedConnection, message: unknown) => {
    if (connectionTargetsSubAgent(agent, connection)) return onMessage(connection, message);
    const list = replacementOf(message);
    if (list) return replace(connection, message, list);
    const id = snapshotRequestOf(message);
    if (id === undefined) return onMessage(connection, message);
    if (id === null) {
      console.warn(`[agents-vue] ${SNAPSHOT_REQUEST} without a string id; answering it with snapshot: ""`);
    }
    // Transcript and version in one synchronous step: no broadcast can fall between.
    sendTo(connection, messagesFrame(agent.messages, version.value, { snapshot: id ?? "" }));
    return undefined;
  }) as OrderedTranscriptHost["onMessage"];
}

/**
 * A class mixin form of {@link orderTranscript}, composable with
 * `withPartialRequests`:
 *
 * ```ts
 * export class ChatAgent extends withOrderedTranscript(AIChatAgent)<Env> { ... }
 * ```
 */
export function withOrderedTranscript<T extends HostClass<object>>(Base: T & HostClass<OrderedTranscriptHost>): T {
  return installingMixin(Base, orderTranscript);
}
