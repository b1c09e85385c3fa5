import type { ChatStatus, UIMessage } from "ai";
import type { ResponseFrame } from "../../src/core/frames";
import { ChatModel, type Effect, type Flags, type View } from "../../src/core/model";
import type { TranscriptRead } from "../../src/core/model/base";
import type { WorkingList } from "../../src/core/model/placement";
import type { SessionSettings } from "../../src/core/settings";
import { mergeStoredWins } from "../../src/core/transcript";

/**
 * Fakes for testing the chat model alone, in Node: a plain working list, and
 * the world the shell would give the model (its answers and its effects).
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
    experimental_automaticToolResolution: false,
    ...overrides
  };
}

/**
 * The world as the model sees it in a unit test: a `View` whose answers the test sets (status, loading,
 * resuming, whether a read can start), and a record of every effect the rules emit, performed at once.
 */
export class FakeWorld<M extends UIMessage = UIMessage> implements View<M> {
  settingsValue: SessionSettings<M>;
  statusValue: ChatStatus = "ready";
  loadingValue = false;
  resumingValue = false;
  /** A transcript reader exists (`readStored`): without one the shell never reads. */
  canReadValue = true;
  readonly effects: Effect[] = [];
  readonly sent: Array<Record<string, unknown>> = [];
  /** Snapshot requests made (exact sync). */
  snapshots = 0;
  /** The reads started (each a `TranscriptRead` of the model's base, to answer with `readAnswered`). */
  readonly reads: Array<{ always: boolean; attempt: number; read: TranscriptRead }> = [];
  readonly flagsValue: Required<Omit<Flags, "cached">> = { serverStreaming: false, recovering: false, toolContinuation: false };
  reconciles = 0;
  readonly warnings: Array<{ key: string; message: string }> = [];
  readonly called: string[] = [];
  /** The answers the model gave the waiting handshake, and its let-gos, in order ("offer:r", "none", "pending", "retry", "let-go"). */
  readonly handshakes: string[] = [];

  constructor(settings: SessionSettings<M>) {
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

  /** As the shell answers: no reader, or a read only `resyncOnReconnect` asks for while it is off, reads nothing. */
  canRead(always: boolean): boolean {
    return this.canReadValue && (always || this.settingsValue.resyncOnReconnect);
  }

  readonly perform = (effect: Effect): void => {
    this.effects.push(effect);
    switch (effect.kind) {
      case "send":
        return void this.sent.push(effect.frame);
      case "read":
        return void this.reads.push({ always: effect.read.always, attempt: effect.read.attempt, read: effect.read });
      case "snapshot":
        return void this.snapshots++;
      case "flags":
        for (const key of ["serverStreaming", "recovering", "toolContinuation"] as const) {
          const value = effect.flags[key];
          if (value !== undefined) this.flagsValue[key] = value;
        }
        return;
      case "reconcile":
        return void this.reconciles++;
      case "warn":
        return void this.warnings.push({ key: effect.key, message: effect.message });
      case "call":
        this.called.push(effect.name);
        return effect.run();
      case "handshake":
        return void this.handshakes.push(effect.answer.kind === "offer" ? `offer:${effect.answer.id}` : effect.answer.kind);
      case "let-go-resumes":
        return void this.handshakes.push("let-go");
    }
  };

  /** The types of the frames sent so far. */
  get sentTypes(): string[] {
    return this.sent.map((frame) => String(frame.type));
  }
}

/** A model over a plain array, with a fake world; `open` starts with the socket open. */
export function makeModel<M extends UIMessage = UIMessage>(
  options: { messages?: M[]; settings?: Partial<SessionSettings<M>>; open?: boolean } = {}
) {
  const io = new FakeWorld<M>(defaultSettings<M>(options.settings));
  const list = new ArrayList<M>(options.messages ? [...options.messages] : []);
  let ids = 0;
  const m = new ChatModel<M>(list, io, io.perform, () => `gen-${++ids}`);
  if (options.open ?? true) Object.assign(m.link, { open: true, everOpened: true });
  /** This client's own requests, as the transport adds them (the AI SDK renders them) and lets them go. */
  const local = {
    add: (id: string) => void (m.turns.at(id).follow = { kind: "chat", via: "request" }),
    delete: (id: string) => m.turns.released(id, false),
    has: (id: string) => m.turns.isLocal(id)
  };
  return { m, io, list, local };
}

/** A handshake the model waits on, as the transport starts one for the AI SDK resume. */
export function awaitHandshake<M extends UIMessage>(m: ChatModel<M>, probeId = "p1", continuation = false): void {
  m.handshake = { probeId, continuation };
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
