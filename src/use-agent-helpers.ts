import type { AgentClient, AgentClientOptions, CallOptions, StreamOptions } from "agents/client";
import { type MaybeRef, isRef, toRaw, unref } from "vue";
import type { SubAgentStep } from "./core/address";
import type { AgentQuery, AgentQueryFunction, AgentQueryParams } from "./use-agent-types";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/** What useAgent keeps per connection, and the small rules it applies; no Vue reactivity here beyond reading refs. */
export const MCP_SERVERS = "cf_agent_mcp_servers";
/** Frame types the client handles itself; `onMessage` does not see them. */
export const PROTOCOL_FRAMES = new Set(["cf_agent_identity", "cf_agent_state", "cf_agent_state_error", MCP_SERVERS, "rpc"]);
export const OPEN = 1;

export const ADDRESS_CHANGED_QUEUED = "Call discarded: the agent address changed before the request could be sent";
export const ADDRESS_CHANGED_SENT = "Connection closed: the agent address changed before the response arrived";

export interface Address {
  agent: string;
  name: string;
  host: string;
  basePath: string | undefined;
  path: string | undefined;
  sub: SubAgentStep[];
}

export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  settled: boolean;
}

/** A call this composable is waiting on; settled once, by the client or by an address change. */
export interface PendingCall {
  /** Whether the request went out on an open socket (it may have executed). */
  sent: boolean;
  fail(message: string): void;
}

/** One client and what this composable keeps about it. */
export interface Connection<AgentT, State> {
  client: AgentClient<AgentT, State>;
  calls: Set<PendingCall>;
  listeners: AbortController;
  openedThisAttempt: boolean;
  failedAttempts: number;
}

export type AnyCall = (method: string, args?: unknown[], options?: CallOptions | StreamOptions) => Promise<unknown>;

export function keyOf(at: Address): string {
  return JSON.stringify([at.agent, at.name, at.host, at.basePath ?? null, at.path ?? null, at.sub.map((step) => [step.agent, step.name])]);
}

export function labelOf(at: Address): string {
  const leaf = at.sub.at(-1);
  return at.basePath ?? (leaf ? `${at.agent}/${at.name}/sub/${leaf.agent}/${leaf.name}` : `${at.agent}/${at.name}`);
}

/** useAgent's options that the composable handles itself; the rest go to AgentClient unchanged. */
export const OWN_OPTIONS: ReadonlySet<string> = new Set([
  "agent",
  "name",
  "host",
  "basePath",
  "path",
  "sub",
  "query",
  "startClosed",
  "enabled",
  "onStateUpdate",
  "onStateUpdateError",
  "onMcpUpdate",
  "onIdentity",
  "onIdentityChange",
  "onConnectionError",
  "onMessage",
  "onOpen",
  "onClose",
  "onError"
]);

/** Options of upstream's hook that have no meaning here, and why (the why in development builds only). */
export const IGNORED_OPTIONS: Record<string, string> =
  process.env.NODE_ENV !== "production"
    ? {
        queryDeps:
          "it keys React's cache of an async query; here a query function is called on every connect, and a reactive query reconnects when it changes",
        cacheTtl: "it expires React's cache of an async query; here a query function is called on every connect",
        transferEnqueuedMessages:
          "the socket is kept when only the query changes (its queue with it), and an address change rejects queued calls (parity rule 115)"
      }
    : { queryDeps: "", cacheTtl: "", transferEnqueuedMessages: "" };

export function warnIgnoredOptions(options: object): void {
  for (const [option, why] of Object.entries(IGNORED_OPTIONS)) {
    if (option in options) console.warn(`[agents-vue] useAgent ignores \`${option}\`${process.env.NODE_ENV !== "production" ? `: ${why}` : ""}.`);
  }
}

/**
 * Over `transport: "capnweb"` a call reaches only the host's native callables;
 * Cap'n Web's own "is not a function" says nothing about why.
 */
export function nativeCallError(method: string, error: unknown): unknown {
  if (!(error instanceof Error) || !/is not a function/.test(error.message)) return error;
  return new Error(
    `[agents-vue] call("${method}") over transport "capnweb" failed: the host serves no native callable "${method}".` +
      (process.env.NODE_ENV !== "production"
        ? " Over capnweb, call() and stub reach only the callables the host gives WebSockets({ callables }); " +
          "an Agent's @callable() methods answer only on the default \"cf-websocket\" transport."
        : ""),
    { cause: error }
  );
}

export function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  const entry: Deferred = {
    promise,
    settled: false,
    resolve: () => {
      entry.settled = true;
      resolve();
    }
  };
  return entry;
}

/** The query as given: a plain function stays uncalled (PartySocket calls it per connect). */
export function readQuery(query: AgentQuery | undefined): AgentQueryFunction | AgentQueryParams | undefined {
  if (typeof query === "function" && !isRef(query)) return query as AgentQueryFunction;
  return unref(query as MaybeRef<AgentQueryParams | undefined>);
}

/** What the socket gets: the function, or a plain copy of the parameters. */
export function socketQuery(query: AgentQueryFunction | AgentQueryParams | undefined): AgentClientOptions["query"] {
  if (query === undefined || typeof query === "function") return query;
  return { ...toRaw(query) };
}

/** Something to compare two queries by: a function by identity, an object by content. */
export function querySnapshot(query: AgentClientOptions["query"]): unknown {
  return typeof query === "function" ? query : JSON.stringify(query ?? null);
}
