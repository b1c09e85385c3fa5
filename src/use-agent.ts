import { AgentClient, type AgentClientOptions, type CallOptions, type StreamOptions, createStubProxy, splitCallOptions } from "agents/client";
import type { MCPServersState } from "agents";
import { computed, markRaw, nextTick, shallowReadonly, shallowRef, toValue, watch } from "vue";
import { type AddressedSocket, type SubAgentStep, agentNameToKebab, httpAddressOf, readSubChain, subAgentPath } from "./core/address";
import { type AgentSocket, FailureProbe, readCloseEvent } from "./core/connection";
import type { ConnectionStatus } from "./core/session";
import { devtoolsProbe } from "./core/devtools-probe";
import { assertBrowser, onDispose, warnOutsideScope } from "./lifecycle";
import {
  MCP_SERVERS,
  PROTOCOL_FRAMES,
  OPEN,
  ADDRESS_CHANGED_QUEUED,
  ADDRESS_CHANGED_SENT,
  type Address,
  type PendingCall,
  type Connection,
  type AnyCall,
  keyOf,
  labelOf,
  IGNORED_OPTIONS,
  OWN_OPTIONS,
  warnIgnoredOptions,
  nativeCallError,
  deferred,
  readQuery,
  socketQuery,
  querySnapshot
} from "./use-agent-helpers";
import type { AgentIdentity, UseAgentOptions, UseAgentReturn } from "./use-agent-types";
// Development-only code (diagnostics, the Vue Devtools support) is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

export type * from "./use-agent-types";

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
    // What is left once the composable's own options are out goes to AgentClient as it is.
    const socketOptions = Object.fromEntries(
      Object.entries(options).filter(([option]) => !OWN_OPTIONS.has(option) && !(option in IGNORED_OPTIONS))
    ) as Partial<AgentClientOptions<State>>;
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
            `[agents-vue] useAgent reconnected to "${labelOf(at)}" and reached ${newAgent}/${newName} instead of ${oldAgent}/${oldName}.` +
              (process.env.NODE_ENV !== "production"
                ? " Server-side routing (basePath) may pick the instance per session; pass onIdentityChange to handle this, or ignore it if expected."
                : "")
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
    const probe = new FailureProbe(client as unknown as AgentSocket, labelOf(at), leaf?.agent ?? at.agent);
    if (process.env.NODE_ENV !== "production" && devtools) devtools.follow(client as unknown as AgentSocket);
    const signal = connection.listeners.signal;

    // AgentClient registered its own listeners in its constructor, so by the
    // time ours run it has settled calls and set `connectionError`/`ready`.
    client.addEventListener(
      "open",
      (event) => {
        if (!isLive()) return;
        connection.openedThisAttempt = true;
        connection.failedAttempts = 0;
        probe.opened();
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
          const attempt = ++connection.failedAttempts;
          connectionError.value = probe.failure(attempt);
          const stale = () => !isLive() || connection.failedAttempts !== attempt || status.value !== "connecting";
          probe.afterFailure(attempt, stale, (error) => (connectionError.value = error));
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
          connectionError.value = probe.failure(connection.failedAttempts + 1);
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

  // Vue Devtools, in development builds with Devtools on the page (see the note in use-agent-chat.ts on the inline test).
  const devtools = process.env.NODE_ENV !== "production" ? devtoolsProbe() : null;
  let lastAddressKey = keyOf(address());
  let lastQuery = socketQuery(readQuery(options.query));
  live = connect(address(), lastQuery);
  status.value = live.client.readyState === OPEN ? "open" : keepClosed() ? "closed" : "connecting";
  const client = shallowRef<AgentClient<AgentT, State>>(live.client);

  /** Reconnects the live client; the status says "connecting" until it opens. */
  const reopen = () => {
    live.client.reconnect();
    if (live.client.readyState !== OPEN) status.value = "connecting";
  };

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
      if (!keepClosed()) reopen();
    },
    { deep: true }
  );

  watch(enabled, (on) => {
    if (disposed) return;
    if (!on) {
      live.client.close();
      status.value = "closed";
    } else if (!closedByCaller) reopen();
  });

  onDispose(() => {
    disposed = true;
    live.listeners.abort();
    live.client.close();
    status.value = "closed";
  });

  if (process.env.NODE_ENV !== "production" && devtools) {
    devtools.inspect(({ inspectConnection }) =>
      inspectConnection(devtools, {
        label: () => labelOf(address()),
        address: () => httpAddressOf(client.value as unknown as AddressedSocket),
        cells: { status, connectionError, identity, state, mcpServers }
      })
    );
  }

  const call = ((method: string, args: unknown[] = [], callOptions?: CallOptions | StreamOptions) => {
    const connection = live;
    const { stream, timeout } = splitCallOptions(callOptions);
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      /** Settles the call once: whichever of the client and an address change comes first. */
      const settle = (end: () => void) => {
        if (settled) return;
        settled = true;
        connection.calls.delete(entry);
        end();
      };
      const entry: PendingCall = {
        sent: connection.client.readyState === OPEN,
        fail: (message) =>
          settle(() => {
            reject(new Error(message));
            stream?.onError?.(message);
          })
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
        (value) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(options.transport === "capnweb" ? nativeCallError(method, error) : error))
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
    reopen();
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
