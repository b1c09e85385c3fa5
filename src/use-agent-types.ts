import type { AgentClient, AgentClientOptions, AgentConnectionError } from "agents/client";
import type { MCPServersState } from "agents";
import type { ComputedRef, MaybeRef, MaybeRefOrGetter, ShallowRef } from "vue";
import type { SubAgentStep } from "./core/address";
import type { ConnectionStatus } from "./core/session";

/** Query parameters of the WebSocket URL (`null`/`undefined` values are left out). */
export type AgentQueryParams = Record<string, string | null | undefined>;

/**
 * The WebSocket query: an object (or a ref to one; changing it reconnects the
 * same client), or a function PartySocket calls before every connection
 * attempt, e.g. to fetch a fresh auth token.
 */
export type AgentQuery = MaybeRef<AgentQueryParams | undefined> | AgentQueryFunction;

/** A query PartySocket asks for before every connection attempt. */
export type AgentQueryFunction = () => AgentQueryParams | Promise<AgentQueryParams>;

/** The agent class and instance the server says this connection reached. */
export interface AgentIdentity {
  /** The agent class, kebab-cased as the server reports it (e.g. `"stateful-agent"`). */
  agent: string;
  /** The instance name. */
  name: string;
}

/** Where a state update came from: a server broadcast or this client's `setState`. */
export type AgentStateSource = "server" | "client";

type AddressFields = "agent" | "name" | "host" | "basePath" | "path" | "query" | "startClosed";
type CallbackFields =
  | "onStateUpdate"
  | "onStateUpdateError"
  | "onIdentity"
  | "onIdentityChange"
  | "onConnectionError"
  | "WebSocket"
  | "debugLogger";

/**
 * Options of {@link useAgent}: everything `AgentClient` takes, where the
 * address may be refs or getters. Changing `agent`, `name`, `host`,
 * `basePath` or `path` connects a new client to the new address; changing
 * only `query` reconnects the same client (a rotated token keeps the UI).
 * Callbacks are read when they fire, so they may be swapped at any time.
 */
export interface UseAgentOptions<State = unknown> extends Omit<AgentClientOptions<State>, AddressFields | CallbackFields> {
  /** The agent class name, e.g. `"CounterAgent"` (kebab-cased in the URL). */
  agent: MaybeRefOrGetter<string>;
  /** The instance name. Defaults to `"default"`. Ignored by the URL when `basePath` is set. */
  name?: MaybeRefOrGetter<string | undefined>;
  /** The worker's host, e.g. `"my-app.workers.dev"`. Defaults to the page's host. */
  host?: MaybeRefOrGetter<string | undefined>;
  /** A custom route instead of `/agents/<agent>/<name>`; the server decides the instance. */
  basePath?: MaybeRefOrGetter<string | undefined>;
  /** A path appended to the agent's URL (no leading slash); after the `sub` chain when there is one. */
  path?: MaybeRefOrGetter<string | undefined>;
  /**
   * Connect to a sub-agent (a facet of the agent at `agent`/`name`), root
   * first: `[{ agent: "ChatAgent", name: "abc" }]` reaches
   * `/agents/<agent>/<name>/sub/chat-agent/abc`. `identity` then names the
   * deepest step, and `path` lists the whole chain. Reactive like the rest of
   * the address. Experimental upstream.
   */
  sub?: MaybeRefOrGetter<ReadonlyArray<SubAgentStep> | undefined>;
  /** Query parameters (an auth token, say): an object, a ref, or a function called on every connect. */
  query?: AgentQuery;
  /** Start without connecting; `reconnect()` (or `enabled` turning true) connects. */
  startClosed?: boolean;
  /**
   * Whether to be connected (upstream's `enabled`). `false` closes the socket
   * and keeps it closed; `true` connects again (unless `close()` was called).
   * Default `true`.
   */
  enabled?: MaybeRefOrGetter<boolean | undefined>;
  /** A WebSocket implementation to use instead of the browser's. */
  WebSocket?: typeof WebSocket;
  /** Receives PartySocket's debug output when `debug` is on. */
  debugLogger?: (...args: unknown[]) => void;
  /** Called after `state` changed: `"server"` for a broadcast, `"client"` for `setState`. */
  onStateUpdate?: (state: State, source: AgentStateSource) => void;
  /** Called when the server refused a state update (e.g. a read-only connection). */
  onStateUpdateError?: (error: string) => void;
  /** Called with the agent's MCP servers, tools, prompts and resources each time the server sends them. */
  onMcpUpdate?: (mcpServers: MCPServersState) => void;
  /** Called each time the server confirms which instance this connection reached. */
  onIdentity?: (name: string, agent: string) => void;
  /**
   * Called when a reconnect to the same address reached a different instance
   * (server-side routing via `basePath`). Without it, a warning is logged.
   */
  onIdentityChange?: (oldName: string, newName: string, oldAgent: string, newAgent: string) => void;
  /** Called when the connection closed for good (a policy close code, or retries spent). */
  onConnectionError?: (error: AgentConnectionError) => void;
  /** Frames that are not the agent's own protocol (identity, state, RPC, MCP), and non-JSON frames. */
  onMessage?: (event: MessageEvent) => void;
  /** Called each time a connection opens. */
  onOpen?: (event: Event) => void;
  /** Called each time the connection closes (including before a reconnect). */
  onClose?: (event: CloseEvent) => void;
  /** Called on a socket error. */
  onError?: (event: Event) => void;
}

/** What {@link useAgent} returns. Pass it as `agent` to `useAgentChat` to chat over the same socket. */
export interface UseAgentReturn<AgentT = unknown, State = unknown> {
  /** The live client. Replaced when the address changes; kept when only the query changes. */
  client: Readonly<ShallowRef<AgentClient<AgentT, State>>>;
  /** The agent's state: from its broadcasts and this client's `setState`. Kept across reconnects. */
  state: Readonly<ShallowRef<State | undefined>>;
  /** `connecting`, `open`, or `closed` (for good: `close()`, a policy close, or retries spent). */
  status: Readonly<ShallowRef<ConnectionStatus>>;
  /** Why the connection is failing or failed, or `null`. Cleared when a connection opens. */
  connectionError: Readonly<ShallowRef<Error | null>>;
  /** The instance the server confirmed, or `null` until it did (and again after an address change). */
  identity: Readonly<ShallowRef<AgentIdentity | null>>;
  /**
   * The agent's MCP state (`cf_agent_mcp_servers`): its servers with their
   * connection state, and their tools, prompts and resources. `undefined`
   * until the server sent it; kept across reconnects, cleared by an address change.
   */
  mcpServers: Readonly<ShallowRef<MCPServersState | undefined>>;
  /** The full address, root first: `{ agent, name }` of the root, then each `sub` step (upstream's `path`). */
  path: ComputedRef<ReadonlyArray<SubAgentStep>>;
  /**
   * The agent's HTTP URL (for `fetch` to its `onRequest`), without the query
   * string so tokens stay out of it; `""` when the client has no URL yet.
   */
  getHttpUrl: () => string;
  /**
   * Resolves once the server confirmed the identity (and sent its state, when it has
   * one). A promise still pending is kept across reconnects and address changes, so
   * an earlier `await` resolves with the next identity.
   */
  readonly ready: Promise<void>;
  /** Sends a new state to the agent, updates `state` at once, and fires `onStateUpdate(state, "client")`. */
  setState: (state: State) => void;
  /**
   * Calls a `@callable` method. Calls made while disconnected are sent when the socket
   * opens. Streaming methods report through `{ stream: { onChunk, onDone, onError } }`.
   */
  call: AgentClient<AgentT, State>["call"];
  /** `stub.method(...args)` is `call("method", args)`, typed from `AgentT`. */
  stub: AgentClient<AgentT, State>["stub"];
  /** Closes the connection; it stays closed (also across address changes) until `reconnect()`. */
  close: (code?: number, reason?: string) => void;
  /** Closes the socket (if open) and connects again. */
  reconnect: () => void;
}
