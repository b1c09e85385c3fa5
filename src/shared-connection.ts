import { type Ref, isRef } from "vue";
import type { AgentSocket } from "./core/connection";

/** A connection the app already holds: `useAgent`'s return, an `AgentClient`, or any compatible socket. */
export type SharedAgentConnection = AgentSocket | { client: Readonly<Ref<AgentSocket | null | undefined>> };

/** The socket behind a shared connection (the live one of a `{ client }` ref), or `null`. */
export function sharedSocketOf(value: SharedAgentConnection | null | undefined): AgentSocket | null {
  if (!value) return null;
  if ("client" in value && isRef(value.client)) return value.client.value ?? null;
  return value as AgentSocket;
}
