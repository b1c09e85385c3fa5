import { type AbstractChat, type FileUIPart, type UIMessage, convertFileListToFileUIParts, generateId } from "ai";
import { isRecord } from "./frames";
import type { SessionSettings } from "./settings";
import { extractClientToolSchemas } from "./tools";
import { trimForServer } from "./transcript";

/** What the transport asks a request body for. */
export interface RequestShape<M extends UIMessage> {
  messages: M[];
  trigger: "submit-message" | "regenerate-message";
  messageId?: string;
}

/**
 * The extra fields of a chat request: `body` (read now), the client tools'
 * schemas, `prepareSendMessagesRequest`'s fields (they win), and with
 * `sendOnlyNewMessages` the messages the server does not hold plus `afterMessageId`.
 */
export async function requestBody<M extends UIMessage>(
  settings: SessionSettings<M>,
  request: RequestShape<M>,
  partyKey: string,
  known: ReadonlySet<string>
): Promise<Record<string, unknown>> {
  const source = settings.body;
  const body: Record<string, unknown> = source ? { ...(typeof source === "function" ? await source() : source) } : {};
  const clientTools = extractClientToolSchemas(settings.tools);
  if (clientTools) body.clientTools = clientTools;
  if (settings.prepareSendMessagesRequest) {
    const result = await settings.prepareSendMessagesRequest({
      id: partyKey,
      messages: request.messages,
      trigger: request.trigger,
      messageId: request.messageId
    });
    if (isRecord(result?.body)) Object.assign(body, result.body);
  }
  if (settings.sendOnlyNewMessages && request.trigger === "submit-message" && !("messages" in body)) {
    const trimmed = trimForServer(request.messages, known, request.messageId);
    if (trimmed.afterMessageId !== undefined) {
      body.messages = trimmed.messages;
      body.afterMessageId = trimmed.afterMessageId;
    }
  }
  return body;
}

type SendInput<M extends UIMessage> = NonNullable<Parameters<AbstractChat<M>["sendMessage"]>[0]>;

/** The user message a queued send will be, built now so it shows at once (as the AI SDK would build it). */
export async function toUserMessage<M extends UIMessage>(input: SendInput<M>, newId: (() => string) | undefined): Promise<M> {
  const record = input as Record<string, unknown>;
  let parts: UIMessage["parts"];
  if ("text" in record || "files" in record) {
    const files = record.files as FileList | FileUIPart[] | undefined;
    const fileParts = Array.isArray(files) ? files : await convertFileListToFileUIParts(files);
    parts = [...fileParts, ...(typeof record.text === "string" ? [{ type: "text" as const, text: record.text }] : [])];
  } else {
    parts = (record.parts as UIMessage["parts"]) ?? [];
  }
  const id = typeof record.id === "string" ? record.id : (newId ?? generateId)();
  // Without `text`/`files`: the AI SDK would build a new message from them, under a new id, when it goes out.
  const { text: _text, files: _files, ...rest } = record;
  return { ...rest, id, role: (record.role as string) ?? "user", parts, metadata: record.metadata } as unknown as M;
}
