import type { UIMessage } from "ai";
import { agentNameToKebab } from "./address";
import { isUIMessage } from "./frames";
import { errorText } from "./tools";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/** Request options for transcript reads. */
export interface TranscriptRequestInit {
  credentials?: RequestCredentials;
  headers?: HeadersInit;
}

/**
 * Reads a stored transcript. It never rejects: a failed response, a network
 * error or a body that is not a list of messages is reported with
 * `console.warn` (naming the agent and the status, never the URL's query)
 * and reads as an empty transcript, so the chat keeps working. With
 * `unreachable`, a network error or a 5xx calls it instead (it throws: the
 * read says nothing about the transcript, `persist` keeps its cached copy).
 */
export async function fetchTranscript<M extends UIMessage>(
  url: string,
  init: TranscriptRequestInit,
  label: string,
  unreachable?: (why: string) => never
): Promise<M[]> {
  let response: Response;
  try {
    response = await fetch(url, { credentials: init.credentials, headers: init.headers });
  } catch (error) {
    unreachable?.(errorText(error));
    console.warn(`[agents-vue] Could not load the transcript of ${label}: ${errorText(error)}`);
    return [];
  }
  if (!response.ok) {
    if (response.status >= 500) unreachable?.(`HTTP ${response.status}`);
    console.warn(
      `[agents-vue] Could not load the transcript of ${label}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}. Starting empty.`
    );
    return [];
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // The connection broke while the body came (the agent went down): the agent's transcript did not arrive.
    unreachable?.(errorText(error));
    console.warn(`[agents-vue] Could not read the transcript of ${label}: ${errorText(error)}`);
    return [];
  }
  if (!text.trim()) return [];
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    console.warn(`[agents-vue] The transcript of ${label} is not valid JSON (HTTP ${response.status}). Starting empty.`);
    return [];
  }
  if (!Array.isArray(data)) {
    console.warn(`[agents-vue] The transcript of ${label} is not a list of messages. Starting empty.`);
    return [];
  }
  const messages = data.filter(isUIMessage);
  if (messages.length !== data.length) {
    console.warn(
      `[agents-vue] Dropped ${data.length - messages.length} malformed message(s) from the transcript of ${label}.`
    );
  }
  return messages as M[];
}

/**
 * Where to read a transcript from: an agent address, or a URL. A `url` may be
 * the agent's own URL (`https://host/agents/chat-agent/session-1`, also its
 * `ws:`/`wss:` socket URL) or the full `…/get-messages` URL (needed when the
 * endpoint lives elsewhere, e.g. under a custom `basePath`).
 */
export type GetAgentMessagesOptions = TranscriptRequestInit &
  ({ host: string; agent: string; name: string } | { url: string });

/**
 * Reads an agent's stored transcript over HTTP (`/get-messages`), e.g. in a
 * route loader before the chat mounts. A `url` whose path ends in
 * `/get-messages` is fetched as given; any other `url` is taken as the
 * agent's URL and `/get-messages` is added to its path (its query string is
 * kept), `ws:`/`wss:` becoming `http:`/`https:`. Failures, and a `url` that
 * is not a non-empty string, read as `[]` with a warning.
 */
export function getAgentMessages<M extends UIMessage = UIMessage>(options: GetAgentMessagesOptions): Promise<M[]> {
  if ("url" in options) {
    if (typeof options.url !== "string" || !options.url.trim()) {
      if (process.env.NODE_ENV !== "production") console.warn("[agents-vue] getAgentMessages: `url` must be the agent's URL or its `/get-messages` URL; reading nothing.");
      return Promise.resolve([]);
    }
    return fetchTranscript<M>(messagesUrl(options.url.trim()), options, "the agent");
  }
  const scheme = typeof location === "undefined" ? "https:" : location.protocol;
  const base = /^https?:\/\//.test(options.host) ? options.host : `${scheme}//${options.host}`;
  const url = `${base.replace(/\/$/, "")}/agents/${agentNameToKebab(options.agent)}/${encodeURIComponent(options.name)}/get-messages`;
  return fetchTranscript<M>(url, options, `${options.agent}/${options.name}`);
}

/** The `/get-messages` URL of `url`: as given when its path already ends so, else the agent's URL with it added. */
export function messagesUrl(url: string): string {
  const cut = url.search(/[?#]/);
  const path = cut < 0 ? url : url.slice(0, cut);
  const rest = cut < 0 ? "" : url.slice(cut);
  const http = path.replace(/^ws(s?):\/\//i, "http$1://");
  if (/\/get-messages\/?$/.test(http)) return http + rest;
  return `${http.replace(/\/+$/, "")}/get-messages${rest}`;
}

/**
 * Runs a transcript reader; failures are reported here and read as `null`.
 * `again`: the read repeats one that failed, whose warning was already given.
 */
export async function readSafely<M extends UIMessage>(read: () => Promise<M[]>, label: string, again = false): Promise<M[] | null> {
  try {
    const stored = await read();
    if (Array.isArray(stored)) return stored;
    if (!again) console.warn(`[agents-vue] The stored transcript of ${label} is not an array; ignoring it.`);
  } catch (error) {
    if (!again) console.warn(`[agents-vue] Could not read the transcript of ${label}:`, errorText(error));
  }
  return null;
}

const readsInFlight = new Map<string, Promise<UIMessage[]>>();

/** Concurrent reads of one address share a request (upstream dedupes initial loads). */
export function readShared<M extends UIMessage>(
  url: string,
  init: { credentials?: RequestCredentials; headers?: HeadersInit },
  label: string,
  unreachable?: (why: string) => never
): Promise<M[]> {
  const key = `${url}|${init.credentials ?? ""}|${JSON.stringify(headersKey(init.headers))}|${unreachable ? 1 : 0}`;
  let read = readsInFlight.get(key);
  if (!read) {
    read = fetchTranscript<UIMessage>(url, init, label, unreachable).finally(() => readsInFlight.delete(key));
    readsInFlight.set(key, read);
  }
  return read as Promise<M[]>;
}

function headersKey(headers: HeadersInit | undefined): Array<[string, string]> {
  if (!headers) return [];
  return [...new Headers(headers).entries()];
}
