import { AgentClient, type AgentClientOptions } from "agents/client";
import { isRef, markRaw, toValue } from "vue";
import { type AddressedSocket, agentNameToKebab, httpAddressOf, readSubChain, subAgentPath } from "./core/address";
import type { ChatTarget } from "./core/chat";
import type { AgentSocket } from "./core/connection";
import { openDirectLane } from "./core/direct-lane";
import { sharedSocketOf } from "./shared-connection";
import type { AgentChatClientOptions, UseAgentChatOptions } from "./use-agent-chat-types";

/** Where a chat talks: its socket (opened here or the app's), and the conversation's names. */
export type Target = ChatTarget;

/** The query of `client`, read now. A function query is PartySocket's async form: passed through, never called. */
export function clientQuery({ query }: AgentChatClientOptions) {
  return typeof query === "function" && !isRef(query) ? query : toValue(query);
}

/** The connection fields of `client`, read now (refs and getters included). */
export function resolveClientFields(client: AgentChatClientOptions) {
  const sub = readSubChain(toValue(client.sub));
  return {
    agent: toValue(client.agent),
    name: toValue(client.name) ?? "default",
    host: toValue(client.host) ?? (typeof location === "undefined" ? "" : location.host),
    basePath: toValue(client.basePath),
    path: subAgentPath(sub, toValue(client.path)),
    sub,
    query: clientQuery(client)
  };
}

/** One string per conversation address: a change of it switches the conversation. */
export function addressKey(fields: { agent: string; name: string; host: string; basePath?: string; path?: string }) {
  return JSON.stringify([fields.agent, fields.name, fields.host, fields.basePath ?? null, fields.path ?? null]);
}

/** A target on `socket`, for the conversation `agent/name`, keyed by its address (default: its label). */
function targetAt(socket: AgentSocket, owns: boolean, agent: string, name: string, key: string | null): Target {
  const label = `${agent}/${name}`;
  return { socket, owns, agent, name, label, key: key ?? label };
}

/** The socket a chat's options name: the app's connection (`agent`), or a new one it owns (`client`); null while `agent` is empty. */
export function targetOf(options: Pick<UseAgentChatOptions, "agent" | "client">): Target | null {
  if (options.agent !== undefined) {
    const socket = sharedSocketOf(toValue(options.agent));
    if (!socket) return null;
    const addressed = socket as AddressedSocket;
    return targetAt(socket, false, addressed.agent ?? "agent", addressed.name ?? "default", httpAddressOf(addressed));
  }
  const client = options.client as AgentChatClientOptions;
  const { sub, ...fields } = resolveClientFields(client);
  const { agent: _a, name: _n, host: _h, basePath: _b, path: _p, sub: _s, query: _q, ...socketOptions } = client;
  const socket = markRaw(
    new AgentClient({ ...socketOptions, ...fields, query: fields.query as AgentClientOptions["query"] })
  ) as unknown as AgentSocket;
  openDirectLane(socket);
  // A sub-agent chat is the conversation of the deepest step.
  const leaf = sub.at(-1) ?? fields;
  if (sub.length > 0) {
    (socket as AddressedSocket).agent = agentNameToKebab(leaf.agent);
    (socket as AddressedSocket).name = leaf.name;
  }
  return targetAt(socket, true, leaf.agent, leaf.name, addressKey(fields));
}
