import type { ChatStatus, UIMessage } from "ai";
import type { ResponseFrame } from "../../src/core/frames";
import { ChatModel, type Ports, type TransportPort } from "../../src/core/model";
import type { TranscriptBase, TranscriptRead } from "../../src/core/model/base";
import type { WorkingList } from "../../src/core/model/placement";
import type { SessionSettings } from "../../src/core/settings";
import { mergeStoredWins } from "../../src/core/transcript";

/**
 * Fakes for testing the chat model alone, in Node: a plain working list, a
 * transport port and the ports the shell would give the model.
 */

/** The working transcript as a plain array, written in place as `PublishingChatState` writes it. */
export class ArrayList<M extends UIMessage = UIMessage> implements WorkingList<M> {
  messages: M[];

  constructor(initial: M[] = []) {
    this.messages = initial;
  }

  replaceMessage(index: number, message: M): void {
    this.messages[index] = message;
  }

  pushMessage(message: M): void {
    this.messages.push(message);
  }
}

interface ChunkFrame {
  continuation?: boolean;
  replay?: boolean;
  seq?: number;
}

/** The highest continuation chunk applied per request, as the transport's ledger keeps it (#1951). */
export class TinyLedger {
  readonly applied = new Map<string, number>();

  record(requestId: string, seq: number | undefined): void {
    if (seq === undefined) return;
    this.applied.set(requestId, Math.max(seq, this.applied.get(requestId) ?? -1));
  }

  isAppliedReplay(requestId: string, frame: ChunkFrame): boolean {
    return frame.replay === true && frame.continuation === true && frame.seq !== undefined && frame.seq <= (this.applied.get(requestId) ?? -1);
  }

  forget(requestId: string): void {
    this.applied.delete(requestId);
  }

  clear(): void {
    this.applied.clear();
  }
}

/**
 * The transport calls the rules make, with what each returns set by the test.
 * `calls` records them in order.
 */
export class FakeTransport {
  readonly ledger = new TinyLedger();
  activeServerTurnId: string | null = null;
  /** A probe waits for an offer (`handleStreamResuming` takes it). */
  awaitingResume = false;
  /** A probe waits for a "none" answer (`handleStreamResumeNone` takes it). */
  awaitingNone = false;
  /** A handshake can be sent again on a new socket. */
  retryable = false;
  readonly calls: string[] = [];

  get appliedChunks(): TransportPort["appliedChunks"] {
    return this.ledger as unknown as TransportPort["appliedChunks"];
  }

  handleServerTurnCompleted(requestId: string): void {
    this.calls.push(`completed:${requestId}`);
    if (this.activeServerTurnId === requestId) this.activeServerTurnId = null;
  }

  handleStreamPending(): boolean {
    this.calls.push("pending");
    return this.awaitingResume;
  }

  handleStreamResumeNone(data: { probeId?: string } = {}): boolean {
    this.calls.push(`none:${data.probeId ?? ""}`);
    if (!this.awaitingNone) return false;
    this.awaitingNone = this.awaitingResume = false;
    return true;
  }

  handleStreamResuming(data: { id: string }): boolean {
    this.calls.push(`resuming:${data.id}`);
    if (!this.awaitingResume) return false;
    this.awaitingResume = this.awaitingNone = false;
    this.activeServerTurnId = data.id;
    return true;
  }

  isAwaitingResume(): boolean {
    return this.awaitingResume || this.awaitingNone;
  }

  observeServerTurn(requestId: string): void {
    this.calls.push(`observe:${requestId}`);
    this.activeServerTurnId = requestId;
  }

  retryPendingResume(): boolean {
    this.calls.push("retry");
    return this.retryable;
  }
}

/** The options a session reads, at their defaults (as `useAgentChat` sets them). */
export function defaultSettings<M extends UIMessage = UIMessage>(overrides: Partial<SessionSettings<M>> = {}): SessionSettings<M> {
  return {
    resume: true,
    cancelOnClientAbort: false,
    autoContinueAfterToolResult: true,
    autoSendAfterAllConfirmationsResolved: true,
    syncMessagesToServer: true,
    resyncOnReconnect: true,
    sendOnlyNewMessages: false,
    mergeMessages: mergeStoredWins,
    toolsRequiringConfirmation: [],
    automaticToolResolution: false,
    ...overrides
  };
}

/** Published flags, as the shell's cells would hold them. */
export interface Flags {
  serverStreaming: boolean;
  recovering: boolean;
  toolContinuation: boolean;
}

/** Ports that record what the model asks of the world; the test sets status, loading and resuming. */
export class FakePorts<M extends UIMessage = UIMessage> implements Ports<M> {
  readonly transport: TransportPort;
  settingsValue: SessionSettings<M>;
  statusValue: ChatStatus = "ready";
  loadingValue = false;
  resumingValue = false;
  readonly sent: Array<Record<string, unknown>> = [];
  /** Snapshot requests made (exact sync). */
  snapshots = 0;
  /** The reads started, as the shell starts them (each a `TranscriptRead` of the model's base, to answer with `readAnswered`). */
  readonly reads: Array<{ always: boolean; attempt: number; read: TranscriptRead }> = [];
  /** The base reads are made on (set by `makeModel`). */
  base: TranscriptBase | undefined;
  /** A transcript reader exists (`readStored`): without one the shell never reads. */
  canRead = true;
  readonly flagsValue: Flags = { serverStreaming: false, recovering: false, toolContinuation: false };
  reconciles = 0;
  readonly warnings: Array<{ key: string; message: string }> = [];
  readonly called: string[] = [];

  constructor(transport: FakeTransport, settings: SessionSettings<M>) {
    this.transport = transport as unknown as TransportPort;
    this.settingsValue = settings;
  }

  settings(): SessionSettings<M> {
    return this.settingsValue;
  }

  status(): ChatStatus {
    return this.statusValue;
  }

  loading(): boolean {
    return this.loadingValue;
  }

  resuming(): boolean {
    return this.resumingValue;
  }

  send(frame: Record<string, unknown>): void {
    this.sent.push(frame);
  }

  /** Mirrors the shell's `reread`: no reader, or a read only `resyncOnReconnect` asks for while it is off, reads nothing. */
  read(always: boolean, attempt = 1): boolean {
    if (!this.canRead || !this.base || (!always && !this.settingsValue.resyncOnReconnect)) return false;
    this.reads.push({ always, attempt, read: this.base.read(always, attempt) });
    return true;
  }

  requestSnapshot(): void {
    this.snapshots++;
  }

  flags(flags: Partial<Flags>): void {
    for (const key of ["serverStreaming", "recovering", "toolContinuation"] as const) {
      const value = flags[key];
      if (value !== undefined) this.flagsValue[key] = value;
    }
  }

  reconcile(): void {
    this.reconciles++;
  }

  warn(key: string, message: string): void {
    this.warnings.push({ key, message });
  }

  call(name: string, run: () => void): void {
    this.called.push(name);
    run();
  }

  /** The types of the frames sent so far. */
  get sentTypes(): string[] {
    return this.sent.map((frame) => String(frame.type));
  }
}

/** A model over a plain array, with fake ports; `open` starts with the socket open. */
export function makeModel<M extends UIMessage = UIMessage>(
  options: { messages?: M[]; settings?: Partial<SessionSettings<M>>; open?: boolean } = {}
) {
  const transport = new FakeTransport();
  const io = new FakePorts<M>(transport, defaultSettings<M>(options.settings));
  const list = new ArrayList<M>(options.messages ? [...options.messages] : []);
  const local = new Set<string>();
  let ids = 0;
  const m = new ChatModel<M>(list, io, local, () => `gen-${++ids}`);
  io.base = m.base;
  if (options.open ?? true) Object.assign(m.link, { open: true, everOpened: true });
  return { m, io, transport, list, local };
}

/** A user message with one text part. */
export function user(id: string, text = id): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** An assistant message with one text part per text given. */
export function assistant(id: string, ...texts: string[]): UIMessage {
  return { id, role: "assistant", parts: texts.map((text) => ({ type: "text" as const, text })) };
}

/** An assistant message holding one client tool call. */
export function toolCallMessage(id: string, toolCallId: string, state = "input-available", extra: Record<string, unknown> = {}): UIMessage {
  return {
    id,
    role: "assistant",
    parts: [{ type: "tool-ask", toolCallId, state, input: {}, ...extra } as unknown as UIMessage["parts"][number]]
  };
}

export const idsOf = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

export const textOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");

/** A `cf_agent_use_chat_response` frame as `readFrame` produces it; `chunk` becomes the body. */
export function response(id: string, fields: Partial<ResponseFrame> & { chunk?: unknown } = {}): ResponseFrame {
  const { chunk, ...rest } = fields;
  return {
    kind: "response",
    id,
    body: chunk === undefined ? "" : JSON.stringify(chunk),
    done: false,
    error: false,
    continuation: false,
    replay: false,
    replayComplete: false,
    seq: undefined,
    messageIds: undefined,
    outcome: undefined,
    ...rest
  };
}
