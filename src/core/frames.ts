import type { UIMessage } from "ai";
import * as CHAT_MESSAGE_TYPES from "./frame-types";
import type { ChatTurnOutcome } from "./protocol";

/** A `cf_agent_use_chat_response` frame, narrowed to the fields the client reads. */
export interface ResponseFrame {
  kind: "response";
  id: string;
  body: string;
  done: boolean;
  error: boolean;
  continuation: boolean;
  replay: boolean;
  replayComplete: boolean;
  seq: number | undefined;
  messageIds: string[] | undefined;
  outcome: ChatTurnOutcome | undefined;
  /** The parsed body, once something asked for it (see `chunkOf`). */
  chunk?: unknown;
}

/**
 * Rule (one parse per frame): a response frame's body parsed once, whoever asks first (the rules, the turn's
 * stream, the observer); undefined for an empty body or one that is not JSON.
 */
export function chunkOf(frame: ResponseFrame): unknown {
  if (!("chunk" in frame)) frame.chunk = frame.body.trim() ? parseJson(frame.body) : undefined;
  return frame.chunk;
}

/** Every chat frame the server can send, after validation. */
export type ChatFrame<M extends UIMessage = UIMessage> =
  | ResponseFrame
  | { kind: "messages"; messages: M[]; connect: boolean; version: number | undefined }
  | { kind: "clear"; version: number | undefined }
  | { kind: "resuming"; id: string; probeId: string | undefined }
  | { kind: "resume-none"; reason: string | undefined; probeId: string | undefined }
  | { kind: "pending"; id: string | undefined; probeId: string | undefined }
  | { kind: "message-updated"; message: M; version: number | undefined }
  | { kind: "recovering"; recovering: boolean };

/** What reading one socket frame produced. */
export type FrameReading<M extends UIMessage = UIMessage> =
  | { kind: "chat"; frame: ChatFrame<M> }
  /** Valid JSON (or text) that is not a chat frame: another protocol's or the app's. */
  | { kind: "other" }
  /** A chat frame with a wrong shape; `problem` names what is wrong. */
  | { kind: "invalid"; problem: string };

const OUTCOMES: ReadonlySet<string> = new Set([
  "completed",
  "error",
  "aborted",
  "skipped",
  "recovering"
]);
const ROLES: ReadonlySet<string> = new Set(["user", "assistant", "system"]);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses socket data as JSON; `undefined` when it is not a JSON text. */
export function parseJson(data: unknown): unknown {
  if (typeof data !== "string") return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** A structural check for a UI message: enough to render it without crashing. */
export function isUIMessage(value: unknown): value is UIMessage {
  if (!isRecord(value)) return false;
  if (typeof value.id !== "string" || typeof value.role !== "string") return false;
  if (!ROLES.has(value.role) || !Array.isArray(value.parts)) return false;
  return value.parts.every((part) => isRecord(part) && typeof part.type === "string");
}

const optionalString = (value: unknown) => (typeof value === "string" ? value : undefined);
/** The transcript version an ordered server stamps on transcript frames (`agents-vue/server`). */
const versionOf = (data: Record<string, unknown>) =>
  Number.isSafeInteger(data.version) && (data.version as number) >= 0 ? (data.version as number) : undefined;
const isOptional = (value: unknown, type: "string" | "boolean" | "number") =>
  value === undefined || value === null || typeof value === type;

function readResponse(data: Record<string, unknown>): ResponseFrame | string {
  if (typeof data.id !== "string") return "a response frame without a string id";
  if (!isOptional(data.body, "string")) return "a response frame whose body is not a string";
  for (const flag of ["done", "error", "continuation", "replay", "replayComplete"]) {
    if (!isOptional(data[flag], "boolean")) return `a response frame whose ${flag} is not a boolean`;
  }
  const seq = typeof data.seq === "number" && Number.isFinite(data.seq) ? data.seq : undefined;
  const messageIds =
    Array.isArray(data.messageIds) && data.messageIds.every((id) => typeof id === "string")
      ? (data.messageIds as string[])
      : undefined;
  const outcome =
    typeof data.outcome === "string" && OUTCOMES.has(data.outcome)
      ? (data.outcome as ChatTurnOutcome)
      : undefined;
  return {
    kind: "response",
    id: data.id,
    body: typeof data.body === "string" ? data.body : "",
    done: data.done === true,
    error: data.error === true,
    continuation: data.continuation === true,
    replay: data.replay === true,
    replayComplete: data.replayComplete === true,
    seq,
    messageIds,
    outcome
  };
}

/**
 * Narrows a parsed frame to a chat frame. Never throws: a chat frame with a
 * wrong shape comes back `invalid` with the problem named, so the caller can
 * warn and drop it while earlier messages stay as they were.
 */
export function readFrame<M extends UIMessage>(data: unknown): FrameReading<M> {
  if (!isRecord(data) || typeof data.type !== "string") return { kind: "other" };
  switch (data.type) {
    case CHAT_MESSAGE_TYPES.USE_CHAT_RESPONSE: {
      const frame = readResponse(data);
      return typeof frame === "string" ? { kind: "invalid", problem: frame } : { kind: "chat", frame };
    }
    case CHAT_MESSAGE_TYPES.CHAT_MESSAGES: {
      if (!Array.isArray(data.messages)) {
        return { kind: "invalid", problem: "a transcript frame without a messages array" };
      }
      const bad = data.messages.findIndex((message) => !isUIMessage(message));
      if (bad >= 0) {
        return { kind: "invalid", problem: `a transcript frame whose message ${bad} is malformed` };
      }
      return {
        kind: "chat",
        frame: { kind: "messages", messages: data.messages as M[], connect: data.connect === true, version: versionOf(data) }
      };
    }
    case CHAT_MESSAGE_TYPES.CHAT_CLEAR:
      return { kind: "chat", frame: { kind: "clear", version: versionOf(data) } };
    case CHAT_MESSAGE_TYPES.STREAM_RESUMING:
      if (typeof data.id !== "string") {
        return { kind: "invalid", problem: "a stream-resuming frame without a string id" };
      }
      return {
        kind: "chat",
        frame: { kind: "resuming", id: data.id, probeId: optionalString(data.probeId) }
      };
    case CHAT_MESSAGE_TYPES.STREAM_RESUME_NONE:
      return {
        kind: "chat",
        frame: {
          kind: "resume-none",
          reason: optionalString(data.reason),
          probeId: optionalString(data.probeId)
        }
      };
    case CHAT_MESSAGE_TYPES.STREAM_PENDING:
      return {
        kind: "chat",
        frame: { kind: "pending", id: optionalString(data.id), probeId: optionalString(data.probeId) }
      };
    case CHAT_MESSAGE_TYPES.MESSAGE_UPDATED:
      if (!isUIMessage(data.message)) {
        return { kind: "invalid", problem: "a message-updated frame with a malformed message" };
      }
      return { kind: "chat", frame: { kind: "message-updated", message: data.message as M, version: versionOf(data) } };
    case CHAT_MESSAGE_TYPES.CHAT_RECOVERING:
      return { kind: "chat", frame: { kind: "recovering", recovering: data.recovering === true } };
    default:
      return { kind: "other" };
  }
}

/**
 * A socket frame as the session handles it: the app's `onFrame` sees it
 * first (parsed, or the raw data) and may consume it; what is not a chat
 * frame is ignored, and a malformed one is reported through `warn` and dropped.
 */
export function decodeSocketFrame<M extends UIMessage>(
  data: unknown,
  onFrame: ((frame: unknown) => boolean | void) | undefined,
  warn: (key: string, message: string) => void
): ChatFrame<M> | undefined {
  const parsed = parseJson(data);
  if (onFrame) {
    try {
      if (onFrame(parsed === undefined ? data : parsed) === true) return undefined;
    } catch (error) {
      console.error("[agents-vue] onFrame threw; the frame is handled as usual.", error);
    }
  }
  if (parsed === undefined) {
    const size = typeof data === "string" ? `${data.length} characters` : data instanceof ArrayBuffer ? `${data.byteLength} bytes of binary` : typeof data;
    warn("non-json", `Ignored a socket frame that is not JSON (${size}).`);
    return undefined;
  }
  const reading = readFrame<M>(parsed);
  if (reading.kind === "invalid") warn(reading.problem, `Ignored ${reading.problem}.`);
  return reading.kind === "chat" ? reading.frame : undefined;
}
