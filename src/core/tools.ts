import { getToolName, isToolUIPart, type JSONSchema7, type UIMessage } from "ai";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

// Upstream's helpers of these names are in agents/chat/react, which imports react and @ai-sdk/react: a Vue app cannot use them.

/**
 * A tool the browser can run. Tools with `execute` are announced to the
 * server with every request (`clientTools`); when the model calls one, the
 * composable runs `execute` with the model's input and sends the output back.
 */
export interface AITool<Input = unknown, Output = unknown> {
  /** What the tool does, for the model. */
  description?: string;
  /** JSON Schema of the tool's input. */
  parameters?: JSONSchema7;
  /** @deprecated Use `parameters`. */
  inputSchema?: JSONSchema7;
  /** Runs the tool in the browser. Without it the call goes to `onToolCall`. */
  // Bivariant on purpose: a record of tools with different inputs must fit `Record<string, AITool>`.
  execute?: { bivarianceHack(input: Input): Output | Promise<Output> }["bivarianceHack"];
}

/** The schema of a client tool as the server receives it in `clientTools`. */
export interface ClientToolSchema {
  name: string;
  description?: string;
  parameters?: JSONSchema7;
}

/** Simplified tool part states for rendering. */
export type ToolPartState =
  | "loading"
  | "streaming"
  | "waiting-approval"
  | "approved"
  | "complete"
  | "error"
  | "denied";

type Part = UIMessage["parts"][number];

const warnedInputSchema = new Set<string>();

/**
 * The schemas of the tools that have `execute`, in the shape the server's
 * `createToolsFromClientSchemas` reads; `undefined` when there are none.
 */
export function extractClientToolSchemas(
  tools?: Record<string, AITool>
): ClientToolSchema[] | undefined {
  if (!tools) return undefined;
  const schemas: ClientToolSchema[] = [];
  for (const [name, tool] of Object.entries(tools)) {
    if (typeof tool?.execute !== "function") continue;
    if (process.env.NODE_ENV !== "production" && tool.inputSchema && !tool.parameters && !warnedInputSchema.has(name)) {
      warnedInputSchema.add(name);
      console.warn(`[agents-vue] Tool "${name}" uses the deprecated 'inputSchema'; rename it to 'parameters'.`);
    }
    schemas.push({ name, description: tool.description, parameters: tool.parameters ?? tool.inputSchema });
  }
  return schemas.length > 0 ? schemas : undefined;
}

/** Maps a tool part's state to one of the simplified states a UI renders. */
export function getToolPartState(part: Part): ToolPartState {
  switch ((part as { state?: unknown }).state) {
    case "input-streaming":
      return "streaming";
    case "approval-requested":
      return "waiting-approval";
    case "approval-responded":
      return "approved";
    case "output-available":
      return "complete";
    case "output-error":
      return "error";
    case "output-denied":
      return "denied";
    default:
      return "loading";
  }
}

/** The tool call id of a tool part. */
export function getToolCallId(part: Part): string {
  return (part as { toolCallId: string }).toolCallId;
}

/** The tool input of a tool part, when it has one. */
export function getToolInput(part: Part): unknown {
  return (part as { input?: unknown }).input;
}

/** The tool output of a tool part, when it has one. */
export function getToolOutput(part: Part): unknown {
  return (part as { output?: unknown }).output;
}

/** The approval request of a tool part, when it has one. */
export function getToolApproval(part: Part): { id: string; approved?: boolean } | undefined {
  return (part as { approval?: { id: string; approved?: boolean } }).approval;
}

/** Names of the tools without `execute`: upstream's legacy confirmation list. */
export function toolsWithoutExecute(tools?: Record<string, AITool>): string[] {
  if (!tools) return [];
  return Object.entries(tools)
    .filter(([, tool]) => typeof tool?.execute !== "function")
    .map(([name]) => name);
}

/** The tool parts of the last message still waiting for the client (`input-available`). */
export function pendingToolParts(
  messages: readonly UIMessage[]
): Array<Extract<Part, { toolCallId: string; state: "input-available" }>> {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "assistant") return [];
  return last.parts.filter(
    (part) => isToolUIPart(part) && part.state === "input-available"
  ) as Array<Extract<Part, { toolCallId: string; state: "input-available" }>>;
}

/**
 * Whether client-side tool work is in flight on the last assistant message: an
 * `onToolCall` still running, or a tool with `execute` that has not answered.
 * Tools waiting for a person (listed in `requiringConfirmation`) do not count.
 */
export function hasPendingClientToolCalls(
  messages: readonly UIMessage[],
  running: ReadonlySet<string>,
  tools: Record<string, AITool> | undefined,
  requiringConfirmation: readonly string[]
): boolean {
  if (running.size === 0 && !tools) return false;
  for (const part of pendingToolParts(messages)) {
    const name = getToolName(part);
    if (requiringConfirmation.includes(name)) continue;
    if (running.has(part.toolCallId)) return true;
    if (typeof tools?.[name]?.execute === "function") return true;
  }
  return false;
}

/** The error text an `execute` that threw is reported with. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
