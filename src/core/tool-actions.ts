import { type AbstractChat, type UIMessage, getToolName, isToolUIPart } from "ai";
import * as CHAT_MESSAGE_TYPES from "./frame-types";
import type { ChatModel } from "./model";
import type { ToolBook, ToolRun } from "./model/tools";
import type { AddToolOutputOptions, OnToolCallCallback, SessionSettings } from "./settings";
import { errorText, extractClientToolSchemas, pendingToolParts } from "./tools";

/** What the tool actions need from the session beyond the model. */
export interface ToolHost<M extends UIMessage> {
  readonly chat: AbstractChat<M>;
  /** The server continues the turn after an output or approval (with `autoContinueAfterToolResult`). */
  requestContinuation(): void;
  /** A bare `sendMessage()`: the resubmission of the deprecated flows. */
  resubmit(): void;
  /** Re-publishes the messages holding this call (the output overlay changed). */
  invalidate(toolCallId: string): void;
  publishRunning(running: ReadonlySet<string>): void;
  disposed(): boolean;
}

/** Tool outputs, approvals and client tool runs: what goes to the server and what shows at once. */
export class ToolActions<M extends UIMessage> {
  #resolving = false;

  readonly #model: ChatModel<M>;
  readonly #host: ToolHost<M>;
  constructor(
    model: ChatModel<M>,
    host: ToolHost<M>
  ) {
    this.#model = model;
    this.#host = host;
  }

  get #book(): ToolBook {
    return this.#model.tools;
  }

  #settings(): SessionSettings<M> {
    return this.#model.io.settings();
  }

  #send(frame: Record<string, unknown>): void {
    this.#model.send(frame);
  }

  /** Answers a tool call: the server gets a `cf_agent_tool_result`, the part updates in place. */
  addToolOutput(options: AddToolOutputOptions): void {
    const host = this.#host;
    const toolName = options.toolName ?? this.#toolNameOf(options.toolCallId) ?? "";
    const failed = options.state === "output-error";
    // An error is a deliberate client action: the server does not auto-continue.
    const autoContinue = failed ? false : this.#settings().autoContinueAfterToolResult;
    this.#send({
      type: CHAT_MESSAGE_TYPES.TOOL_RESULT,
      toolCallId: options.toolCallId,
      toolName,
      output: options.output,
      ...(options.state ? { state: options.state } : {}),
      ...(options.errorText !== undefined ? { errorText: options.errorText } : {}),
      autoContinue,
      clientTools: extractClientToolSchemas(this.#settings().tools)
    });
    if (!failed) this.#showResult(options.toolCallId, options.output);
    if (autoContinue) host.requestContinuation();
    const local = failed
      ? { state: "output-error" as const, tool: toolName as never, toolCallId: options.toolCallId, errorText: options.errorText ?? "Tool execution denied by user" }
      : { tool: toolName as never, toolCallId: options.toolCallId, output: options.output as never };
    void Promise.resolve(host.chat.addToolOutput(local)).catch((error: unknown) =>
      console.warn("[agents-vue] Could not apply a tool output locally:", errorText(error))
    );
  }

  /** @deprecated upstream's `addToolResult`: sends the output and, with auto-continue off, resubmits. */
  addToolResult(args: { tool?: string; toolCallId: string; output?: unknown }): void {
    const host = this.#host;
    const settings = this.#settings();
    const toolName = args.tool ?? this.#toolNameOf(args.toolCallId) ?? "";
    const autoContinue = settings.autoContinueAfterToolResult;
    this.#send({
      type: CHAT_MESSAGE_TYPES.TOOL_RESULT,
      toolCallId: args.toolCallId,
      toolName,
      output: args.output,
      autoContinue,
      clientTools: extractClientToolSchemas(settings.tools)
    });
    this.#showResult(args.toolCallId, args.output);
    void Promise.resolve(host.chat.addToolOutput({ tool: toolName as never, toolCallId: args.toolCallId, output: args.output as never })).catch(() => {});
    if (autoContinue) return host.requestContinuation();
    if (!settings.autoSendAfterAllConfirmationsResolved) return host.resubmit();
    // Legacy confirmation flow: resubmit once no confirmation is waiting.
    const book = this.#book;
    const waiting = pendingToolParts(this.#model.messages).filter(
      (part) =>
        part.toolCallId !== args.toolCallId &&
        settings.toolsRequiringConfirmation.includes(getToolName(part)) &&
        !book.results.has(part.toolCallId)
    );
    if (waiting.length === 0) host.resubmit();
  }

  /** Answers an approval request; with no matching part it warns and sends nothing. */
  addToolApprovalResponse(args: Parameters<AbstractChat<M>["addToolApprovalResponse"]>[0]): Promise<void> {
    const host = this.#host;
    let toolCallId: string | undefined;
    for (const message of this.#model.messages) {
      const part = message.parts.find((candidate) => isToolUIPart(candidate) && (candidate as { approval?: { id?: unknown } }).approval?.id === args.id);
      if (part) {
        toolCallId = (part as { toolCallId: string }).toolCallId;
        break;
      }
    }
    if (toolCallId) {
      const autoContinue = this.#settings().autoContinueAfterToolResult;
      this.#send({ type: CHAT_MESSAGE_TYPES.TOOL_APPROVAL, toolCallId, approved: args.approved, autoContinue });
      if (autoContinue) host.requestContinuation();
    } else {
      console.warn(`[agents-vue] addToolApprovalResponse: no tool part awaits approval "${args.id}"; nothing was sent to the server.`);
    }
    return Promise.resolve(host.chat.addToolApprovalResponse(args));
  }

  /** Runs the client tool calls that wait once the response ended (see `ToolBook.runnable`). */
  runPending(): void {
    const settings = this.#settings();
    const runs = this.#book.runnable(this.#model.messages, settings.tools, !!settings.onToolCall, settings.experimental_automaticToolResolution);
    for (const run of runs) this.#run(run, settings.onToolCall);
  }

  #run(run: ToolRun, onToolCall: OnToolCallCallback | undefined): void {
    const { toolCallId, input } = run.part;
    const toolName = run.toolName;
    const failed = (error: unknown) => {
      if (!this.#host.disposed()) this.addToolOutput({ toolCallId, toolName, state: "output-error", errorText: errorText(error) });
    };
    this.#markRunning(toolCallId, true);
    let result: unknown;
    try {
      result =
        run.kind === "execute"
          ? run.execute(input)
          : onToolCall?.({ toolCall: { toolCallId, toolName, input }, addToolOutput: (options) => this.addToolOutput({ ...options, toolName }) });
    } catch (error) {
      if (run.kind === "execute") failed(error);
      else console.error(`[agents-vue] onToolCall threw for "${toolName}":`, error);
      this.#markRunning(toolCallId, false);
      return;
    }
    void Promise.resolve(result)
      .then(
        (output) => {
          if (run.kind === "execute" && !this.#host.disposed()) this.addToolOutput({ toolCallId, toolName, output });
        },
        (error: unknown) => {
          if (run.kind === "execute") failed(error);
          else console.error(`[agents-vue] onToolCall rejected for "${toolName}":`, error);
        }
      )
      .finally(() => this.#markRunning(toolCallId, false));
  }

  /** The deprecated `experimental_automaticToolResolution`: runs tools with `execute` in order, then sends all results. */
  resolveAutomatically(): void {
    const host = this.#host;
    const settings = this.#settings();
    if (!settings.experimental_automaticToolResolution || this.#resolving) return;
    const tools = settings.tools;
    const calls = this.#book.automatic(this.#model.messages, tools, settings.toolsRequiringConfirmation);
    if (calls.length === 0) return;
    this.#resolving = true;
    void (async () => {
      try {
        const results: Array<{ toolCallId: string; toolName: string; output: unknown }> = [];
        for (const part of calls) {
          const toolName = getToolName(part);
          let output: unknown = null;
          const execute = tools?.[toolName]?.execute;
          if (execute && part.input !== undefined) {
            try {
              output = await execute(part.input);
            } catch (error) {
              output = `Error executing tool: ${errorText(error)}`;
            }
          }
          this.#book.claim(part.toolCallId);
          results.push({ toolCallId: part.toolCallId, toolName, output });
        }
        if (host.disposed()) return;
        const clientTools = extractClientToolSchemas(tools);
        for (const result of results) {
          this.#send({ type: CHAT_MESSAGE_TYPES.TOOL_RESULT, ...result, autoContinue: this.#settings().autoContinueAfterToolResult, clientTools });
        }
        await Promise.all(
          results.map((result) => host.chat.addToolOutput({ tool: result.toolName as never, toolCallId: result.toolCallId, output: result.output as never }))
        );
        for (const result of results) this.#showResult(result.toolCallId, result.output);
        host.requestContinuation();
      } finally {
        this.#resolving = false;
        this.#model.reconcile();
      }
    })();
  }

  #showResult(toolCallId: string, output: unknown): void {
    this.#book.results.set(toolCallId, output);
    this.#host.invalidate(toolCallId);
  }

  #markRunning(toolCallId: string, running: boolean): void {
    const set = this.#book.running;
    if (running === set.has(toolCallId)) return;
    if (running) set.add(toolCallId);
    else set.delete(toolCallId);
    this.#host.publishRunning(new Set(set));
  }

  #toolNameOf(toolCallId: string): string | undefined {
    const messages = this.#model.messages;
    for (let i = messages.length - 1; i >= 0; i--) {
      for (const part of (messages[i] as M).parts) if (isToolUIPart(part) && part.toolCallId === toolCallId) return getToolName(part);
    }
    return undefined;
  }
}
