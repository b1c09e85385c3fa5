import { getToolName, type UIMessage } from "ai";
import { type AITool, pendingToolParts } from "../tools";
import { forgetOldest } from "./turns";

type PendingPart = ReturnType<typeof pendingToolParts>[number];

/** A client tool call to answer now: with the tool's `execute`, or through `onToolCall`. */
export type ToolRun =
  | { kind: "execute"; part: PendingPart; toolName: string; execute: NonNullable<AITool["execute"]> }
  | { kind: "callback"; part: PendingPart; toolName: string };

/**
 * What this client knows of client tool calls: which it answered, which run,
 * and which belong to another tab.
 */
export class ToolBook {
  /** Calls this client started answering: each runs at most once per chat, also after a clear (#2195; issue 21, 9). */
  readonly processed = new Set<string>();
  /** Outputs this client gave, shown at once (#728). */
  readonly results = new Map<string, unknown>();
  /** Calls whose `execute` or `onToolCall` is still running. */
  readonly running = new Set<string>();
  /** Calls first seen in another client's turn: that client answers them. */
  readonly #others = new Set<string>();

  /**
   * Rule (a watching tab never answers): a tool call streamed in another
   * client's turn is that client's to answer; running it here too would run
   * a tool with `execute` once per open tab. (Upstream runs it in every tab.)
   */
  noteOthers(chunk: Record<string, unknown>): void {
    if (chunk.type !== "tool-input-start" && chunk.type !== "tool-input-available") return;
    if (typeof chunk.toolCallId !== "string") return;
    this.#others.add(chunk.toolCallId);
    forgetOldest(this.#others);
  }

  /**
   * Rule (client tools run after the stream, #2195): a server tool sits in
   * `input-available` until its result arrives in the same stream, so only
   * what still waits once the response ended belongs to the client. Calls
   * are marked processed as they are returned.
   */
  runnable(messages: readonly UIMessage[], tools: Record<string, AITool> | undefined, callback: boolean, automatic: boolean): ToolRun[] {
    const runs: ToolRun[] = [];
    for (const part of pendingToolParts(messages)) {
      const id = part.toolCallId;
      if (this.processed.has(id) || this.results.has(id) || this.#others.has(id)) continue;
      const toolName = getToolName(part);
      const execute = tools?.[toolName]?.execute;
      if (typeof execute === "function") {
        if (automatic) continue; // the deprecated path owns these
        runs.push({ kind: "execute", part, toolName, execute });
      } else if (callback) runs.push({ kind: "callback", part, toolName });
      else continue;
      this.claim(id);
    }
    return runs;
  }

  /** Rule (a tool call runs once): a call this client ran never runs again, even if a read brings its message back after a clear; at most 500 are remembered. */
  claim(toolCallId: string): void {
    this.processed.add(toolCallId);
    forgetOldest(this.processed);
  }

  /** The calls the deprecated `experimental_automaticToolResolution` answers, in order. */
  automatic(messages: readonly UIMessage[], tools: Record<string, AITool> | undefined, confirming: readonly string[]): PendingPart[] {
    return pendingToolParts(messages).filter((part) => {
      const name = getToolName(part);
      return (
        !this.processed.has(part.toolCallId) &&
        !this.#others.has(part.toolCallId) &&
        !confirming.includes(name) &&
        typeof tools?.[name]?.execute === "function"
      );
    });
  }

  /** Rule (answered calls show answered, #728): the output this client gave overlays a call still waiting. */
  withResults<M extends UIMessage>(message: M): M {
    if (this.results.size === 0) return message;
    let changed = false;
    const parts = message.parts.map((part) => {
      const call = part as { toolCallId?: string; state?: string };
      if (!call.toolCallId || call.state !== "input-available" || !this.results.has(call.toolCallId)) return part;
      changed = true;
      return { ...part, state: "output-available", output: this.results.get(call.toolCallId) } as typeof part;
    });
    return changed ? ({ ...message, parts } as M) : message;
  }

  /** Forgets outputs for calls no message holds any more (once the chat settled). */
  prune(messages: readonly UIMessage[]): void {
    if (this.results.size === 0) return;
    const present = new Set<string>();
    for (const message of messages) {
      for (const part of message.parts) {
        const id = (part as { toolCallId?: unknown }).toolCallId;
        if (typeof id === "string") present.add(id);
      }
    }
    for (const id of this.results.keys()) if (!present.has(id)) this.results.delete(id);
  }

  /** A clear forgets outputs and running calls; which calls ran is kept (see `claim`). */
  reset(): void {
    this.results.clear();
    this.running.clear();
  }
}
