import {
  AgentClient,
  type AgentClientOptions,
  type AgentConnectionError,
  type CallOptions,
  type StreamOptions,
  createStubProxy,
  splitCallOptions
} from "agents/client";
import type { MCPServersState } from "agents";
import {
  type ComputedRef,
  type MaybeRef,
  type MaybeRefOrGetter,
  type ShallowRef,
  computed,
  isRef,
  markRaw,
  nextTick,
  shallowReadonly,
  shallowRef,
  toRaw,
  toValue,
  unref,
  watch
} from "vue";
import { type AddressedSocket, type SubAgentStep, agentNameToKebab, httpAddressOf, readSubChain, subAgentPath } from "./core/address";
import { connectionFailure, readCloseEvent } from "./core/connection";
import type { ConnectionStatus } from "./core/session";
import { assertBrowser, onDispose, warnOutsideScope } from "./lifecycle";

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

const MCP_SERVERS = "cf_agent_mcp_servers";
/** Frame types the client handles itself; `onMessage` does not see them. */
const PROTOCOL_FRAMES = new Set(["cf_agent_identity", "cf_agent_state", "cf_agent_state_error", MCP_SERVERS, "rpc"]);
const OPEN = 1;

const ADDRESS_CHANGED_QUEUED = "Call discarded: the agent address changed before the request could be sent";
const ADDRESS_CHANGED_SENT = "Connection closed: the agent address changed before the response arrived";

interface Address {
  agent: string;
  name: string;
  host: string;
  basePath: string | undefined;
  path: string | undefined;
  sub: SubAgentStep[];
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  settled: boolean;
}

/** A call this composable is waiting on; settled once, by the client or by an address change. */
interface PendingCall {
  /** Whether the request went out on an open socket (it may have executed). */
  sent: boolean;
  fail(message: string): void;
}

/** One client and what this composable keeps about it. */
interface Connection<AgentT, State> {
  client: AgentClient<AgentT, State>;
  calls: Set<PendingCall>;
  listeners: AbortController;
  openedThisAttempt: boolean;
  failedAttempts: number;
}

type AnyCall = (method: string, args?: unknown[], options?: CallOptions | StreamOptions) => Promise<unknown>;

function keyOf(at: Address): string {
  return JSON.stringify([at.agent, at.name, at.host, at.basePath ?? null, at.path ?? null, at.sub.map((step) => [step.agent, step.name])]);
}

function labelOf(at: Address): string {
  const leaf = at.sub.at(-1);
  return at.basePath ?? (leaf ? `${at.agent}/${at.name}/sub/${leaf.agent}/${leaf.name}` : `${at.agent}/${at.name}`);
}

/** Options of upstream's hook that have no meaning here, and why. */
const IGNORED_OPTIONS: Record<string, string> = {
  queryDeps:
    "it keys React's cache of an async query; here a query function is called on every connect, and a reactive query reconnects when it changes",
  cacheTtl: "it expires React's cache of an async query; here a query function is called on every connect",
  transferEnqueuedMessages:
    "the socket is kept when only the query changes (its queue with it), and an address change rejects queued calls (parity rule 115)"
};

function warnIgnoredOptions(options: object): void {
  for (const [option, why] of Object.entries(IGNORED_OPTIONS)) {
    if (option in options) console.warn(`[agents-vue] useAgent ignores \`${option}\`: ${why}.`);
  }
}

/**
 * Over `transport: "capnweb"` a call reaches only the host's native callables;
 * Cap'n Web's own "is not a function" says nothing about why.
 */
function nativeCallError(method: string, error: unknown): unknown {
  if (!(error instanceof Error) || !/is not a function/.test(error.message)) return error;
  return new Error(
    `[agents-vue] call("${method}") over transport "capnweb" failed: the host serves no native callable "${method}". ` +
      "Over capnweb, call() and stub reach only the callables the host gives WebSockets({ callables }); " +
      "an Agent's @callable() methods answer only on the default \"cf-websocket\" transport.",
    { cause: error }
  );
}

function deferred(): Deferred {
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
function readQuery(query: AgentQuery | undefined): AgentQueryFunction | AgentQueryParams | undefined {
  if (typeof query === "function" && !isRef(query)) return query as AgentQueryFunction;
  return unref(query as MaybeRef<AgentQueryParams | undefined>);
}

/** What the socket gets: the function, or a plain copy of the parameters. */
function socketQuery(query: AgentQueryFunction | AgentQueryParams | undefined): AgentClientOptions["query"] {
  if (query === undefined || typeof query === "function") return query;
  return { ...toRaw(query) };
}

/** Something to compare two queries by: a function by identity, an object by content. */
function querySnapshot(query: AgentClientOptions["query"]): unknown {
  return typeof query === "function" ? query : JSON.stringify(query ?? null);
}

/**
 * PartySocket re-dispatches the close it synthesizes for `close()`/`reconnect()`
 * through `new CloseEvent(type, event)`, which lands the type in `code` and the
 * original event in `reason`. Hand callers a close event with real fields.
 */

/**
 * Connect to a Cloudflare Agent: its state, its `@callable` methods, and the
 * identity the server confirms. Wraps an `AgentClient` from `agents/client`.
 *
 * The address options may be refs or getters: a new `name` (or agent, host,
 * path) connects to that instance without remounting; a new `query` (a
 * rotated token) reconnects the same client. Everything is released when the
 * calling component unmounts or the effect scope stops. Browser only: on the
 * server it throws at once.
 *
 * Type it from the agent class to get typed `state`, `setState`, `call` and
 * `stub`: `useAgent<MyAgent>({ agent: "MyAgent" })`. With a state type alone,
 * `useAgent<MyState>(...)` types `state` and leaves calls untyped.
 */
export function useAgent<AgentT = unknown, State = AgentT extends { get state(): infer S } ? S : AgentT>(
  options: UseAgentOptions<State>
): UseAgentReturn<AgentT, State> {
  assertBrowser("useAgent");
  warnOutsideScope("useAgent");
  warnIgnoredOptions(options);

  const state = shallowRef<State | undefined>(undefined);
  const status = shallowRef<ConnectionStatus>("connecting");
  const connectionError = shallowRef<Error | null>(null);
  const identity = shallowRef<AgentIdentity | null>(null);
  const mcpServers = shallowRef<MCPServersState | undefined>(undefined);
  let ready = deferred();
  // Whether the caller wants a connection: `startClosed` and close() say no
  // (new clients for a new address then start closed too) until reconnect(),
  // and so does `enabled: false` for as long as it is false.
  let closedByCaller = !!options.startClosed;
  const enabled = () => toValue(options.enabled) ?? true;
  const keepClosed = () => closedByCaller || !enabled();
  let disposed = false;

  const address = (): Address => ({
    agent: toValue(options.agent),
    name: toValue(options.name) ?? "default",
    host: toValue(options.host) ?? location.host,
    basePath: toValue(options.basePath) || undefined,
    path: toValue(options.path) || undefined,
    sub: readSubChain(toValue(options.sub))
  });

  let live: Connection<AgentT, State>;

  const connect = (at: Address, query: AgentClientOptions["query"]): Connection<AgentT, State> => {
    const {
      agent: _agent,
      name: _name,
      host: _host,
      basePath: _basePath,
      path: _path,
      sub: _sub,
      query: _query,
      startClosed: _startClosed,
      enabled: _enabled,
      onStateUpdate: _onStateUpdate,
      onStateUpdateError: _onStateUpdateError,
      onMcpUpdate: _onMcpUpdate,
      onIdentity: _onIdentity,
      onIdentityChange: _onIdentityChange,
      onConnectionError: _onConnectionError,
      onMessage: _onMessage,
      onOpen: _onOpen,
      onClose: _onClose,
      onError: _onError,
      ...rest
    } = options;
    const socketOptions = Object.fromEntries(
      Object.entries(rest).filter(([option]) => !(option in IGNORED_OPTIONS))
    ) as typeof rest;
    // Callbacks of a client that was replaced must not touch the refs.
    let self: Connection<AgentT, State> | undefined;
    const isLive = () => self !== undefined && self === live && !disposed;

    const client = markRaw(
      new AgentClient<AgentT, State>({
        ...socketOptions,
        agent: at.agent,
        name: at.name,
        host: at.host,
        basePath: at.basePath,
        path: subAgentPath(at.sub, at.path),
        query,
        startClosed: keepClosed(),
        onStateUpdate: (next, source) => {
          if (!isLive()) return;
          state.value = next;
          options.onStateUpdate?.(next, source);
        },
        onStateUpdateError: (error) => {
          if (isLive()) options.onStateUpdateError?.(error);
        },
        onIdentity: (name, agent) => {
          if (!isLive()) return;
          identity.value = { agent, name };
          ready.resolve();
          options.onIdentity?.(name, agent);
        },
        onIdentityChange: (oldName, newName, oldAgent, newAgent) => {
          if (!isLive()) return;
          if (options.onIdentityChange) {
            options.onIdentityChange(oldName, newName, oldAgent, newAgent);
            return;
          }
          console.warn(
            `[agents-vue] useAgent reconnected to "${labelOf(at)}" and reached ${newAgent}/${newName} instead of ${oldAgent}/${oldName}. ` +
              "Server-side routing (basePath) may pick the instance per session; pass onIdentityChange to handle this, or ignore it if expected."
          );
        },
        onConnectionError: (error) => {
          if (isLive()) options.onConnectionError?.(error);
        }
      })
    );

    const leaf = at.sub.at(-1);
    if (leaf) {
      // Upstream reports the deepest step as the connection's agent and name
      // (what a chat on this socket talks to) until the server confirms it.
      client.agent = agentNameToKebab(leaf.agent);
      client.name = leaf.name;
    }

    const connection: Connection<AgentT, State> = {
      client,
      calls: new Set(),
      listeners: new AbortController(),
      openedThisAttempt: client.readyState === OPEN,
      failedAttempts: 0
    };
    self = connection;
    const signal = connection.listeners.signal;

    // AgentClient registered its own listeners in its constructor, so by the
    // time ours run it has settled calls and set `connectionError`/`ready`.
    client.addEventListener(
      "open",
      (event) => {
        if (!isLive()) return;
        connection.openedThisAttempt = true;
        connection.failedAttempts = 0;
        // The socket flushes its buffer before "open": everything queued is out.
        for (const call of connection.calls) call.sent = true;
        status.value = "open";
        connectionError.value = null;
        options.onOpen?.(event);
      },
      { signal }
    );
    client.addEventListener(
      "close",
      (raw) => {
        if (!isLive()) return;
        const event = readCloseEvent(raw);
        const opened = connection.openedThisAttempt;
        connection.openedThisAttempt = false;
        // AgentClient sets connectionError on a close that ends reconnection,
        // also when maxRetries is spent and PartySocket still "should" reconnect.
        const final = !client.shouldReconnect || client.connectionError !== null;
        status.value = final ? "closed" : "connecting";
        if (client.connectionError) {
          connectionError.value = client.connectionError;
        } else if (!opened && !final) {
          // The attempt never opened: unreachable or refused; PartySocket retries.
          connection.failedAttempts++;
          connectionError.value = connectionFailure(labelOf(at), event, connection.failedAttempts);
        }
        if (ready.settled) ready = deferred();
        options.onClose?.(
          new CloseEvent("close", { code: event.code ?? 1005, reason: event.reason ?? "", wasClean: event.wasClean ?? true })
        );
      },
      { signal }
    );
    client.addEventListener(
      "error",
      (event) => {
        if (!isLive()) return;
        if (!connection.openedThisAttempt && !connectionError.value) {
          connectionError.value = connectionFailure(labelOf(at), {}, connection.failedAttempts + 1);
        }
        options.onError?.(event);
      },
      { signal }
    );
    client.addEventListener(
      "message",
      (event) => {
        if (!isLive()) return;
        if (typeof event.data === "string") {
          let frame: { type?: unknown; mcp?: unknown } | null = null;
          try {
            frame = JSON.parse(event.data) as { type?: unknown; mcp?: unknown } | null;
          } catch {
            frame = null;
          }
          const type = frame?.type;
          if (type === MCP_SERVERS && frame?.mcp && typeof frame.mcp === "object") {
            mcpServers.value = frame.mcp as MCPServersState;
            options.onMcpUpdate?.(mcpServers.value);
            return;
          }
          if (typeof type === "string" && PROTOCOL_FRAMES.has(type)) return;
        }
        options.onMessage?.(event);
      },
      { signal }
    );
    return connection;
  };

  /**
   * Detaches from a replaced client and closes it; its calls fail with an
   * address-change message. The close waits for the current flush, so a chat
   * sharing the client moves to the new one first and never sees this close.
   */
  const retire = (old: Connection<AgentT, State>) => {
    for (const call of old.calls) call.fail(call.sent ? ADDRESS_CHANGED_SENT : ADDRESS_CHANGED_QUEUED);
    old.listeners.abort();
    void nextTick(() => old.client.close());
  };

  let lastAddressKey = keyOf(address());
  let lastQuery = socketQuery(readQuery(options.query));
  live = connect(address(), lastQuery);
  status.value = live.client.readyState === OPEN ? "open" : keepClosed() ? "closed" : "connecting";
  const client = shallowRef<AgentClient<AgentT, State>>(live.client);

  watch(
    // Deep, so a token changed inside a reactive query object counts too.
    [() => keyOf(address()), () => readQuery(options.query)],
    ([key, given]) => {
      if (disposed) return;
      const query = socketQuery(given);
      if (key !== lastAddressKey) {
        lastAddressKey = key;
        lastQuery = query;
        const old = live;
        identity.value = null;
        mcpServers.value = undefined;
        connectionError.value = null;
        if (ready.settled) ready = deferred();
        live = connect(address(), query);
        status.value = keepClosed() ? "closed" : "connecting";
        client.value = live.client;
        retire(old);
        return;
      }
      if (querySnapshot(query) === querySnapshot(lastQuery)) return;
      lastQuery = query;
      // Same address, new credentials: keep the client (and any chat on it), reconnect.
      live.client.updateProperties({ query });
      if (!keepClosed()) {
        live.client.reconnect();
        if (live.client.readyState !== OPEN) status.value = "connecting";
      }
    },
    { deep: true }
  );

  watch(enabled, (on) => {
    if (disposed) return;
    if (!on) {
      live.client.close();
      status.value = "closed";
    } else if (!closedByCaller) {
      live.client.reconnect();
      if (live.client.readyState !== OPEN) status.value = "connecting";
    }
  });

  onDispose(() => {
    disposed = true;
    live.listeners.abort();
    live.client.close();
    status.value = "closed";
  });

  const call = ((method: string, args: unknown[] = [], callOptions?: CallOptions | StreamOptions) => {
    const connection = live;
    const { stream, timeout } = splitCallOptions(callOptions);
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const entry: PendingCall = {
        sent: connection.client.readyState === OPEN,
        fail(message) {
          if (settled) return;
          settled = true;
          connection.calls.delete(entry);
          reject(new Error(message));
          stream?.onError?.(message);
        }
      };
      // Once an address change failed the call, the old client's own
      // "Connection closed" must not reach the caller's callbacks again.
      const guarded: StreamOptions | undefined = stream && {
        onChunk: (chunk) => {
          if (!settled) stream.onChunk?.(chunk);
        },
        onDone: (value) => {
          if (!settled) stream.onDone?.(value);
        },
        onError: (error) => {
          if (!settled) stream.onError?.(error);
        }
      };
      connection.calls.add(entry);
      (connection.client.call as AnyCall)(method, args, { timeout, stream: guarded }).then(
        (value) => {
          if (settled) return;
          settled = true;
          connection.calls.delete(entry);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          connection.calls.delete(entry);
          reject(options.transport === "capnweb" ? nativeCallError(method, error) : error);
        }
      );
    });
  }) as AgentClient<AgentT, State>["call"];

  const stub = createStubProxy((method, args) => (call as AnyCall)(method, args)) as AgentClient<AgentT, State>["stub"];

  const setState = (next: State) => {
    live.client.setState(next);
  };

  const close = (code?: number, reason?: string) => {
    closedByCaller = true;
    live.client.close(code, reason);
    status.value = "closed";
  };

  const reconnect = () => {
    closedByCaller = false;
    // While `enabled` is false the connection follows it, not this call.
    if (!enabled()) return;
    live.client.reconnect();
    if (live.client.readyState !== OPEN) status.value = "connecting";
  };

  const path = computed<ReadonlyArray<SubAgentStep>>(() => {
    const at = address();
    return [{ agent: at.agent, name: at.name }, ...at.sub];
  });

  return {
    client: shallowReadonly(client),
    state: shallowReadonly(state),
    status: shallowReadonly(status),
    connectionError: shallowReadonly(connectionError),
    identity: shallowReadonly(identity),
    mcpServers: shallowReadonly(mcpServers),
    path,
    getHttpUrl: () => httpAddressOf(live.client as unknown as AddressedSocket) ?? "",
    get ready() {
      return ready.promise;
    },
    setState,
    call,
    stub,
    close,
    reconnect
  };
}
