// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/** Upstream's class-name to URL-segment rule (`ChatAgent` → `chat-agent`, `MY_AGENT` → `my-agent`). */
export function agentNameToKebab(name: string): string {
  if (name === name.toUpperCase() && name !== name.toLowerCase()) {
    return name.toLowerCase().replace(/_/g, "-");
  }
  return name
    .replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
    .replace(/^-/, "")
    .replace(/_/g, "-")
    .replace(/-$/, "");
}

/** What a socket may expose about where it points (AgentClient, useAgent's connection). */
export interface AddressedSocket {
  _pkurl?: string;
  _pk?: string;
  getHttpUrl?: () => string;
  agent?: string;
  name?: string;
}

/**
 * The HTTP address of the agent a socket points at, without its query string
 * (tokens stay out of transcript reads and out of warnings), or `null` when
 * the socket does not say.
 */
export function httpAddressOf(socket: AddressedSocket): string | null {
  // A socket that throws while it says, or says something that is not a URL, does not say.
  try {
    const raw = typeof socket.getHttpUrl === "function" ? socket.getHttpUrl() : socket._pkurl;
    if (!raw) return null;
    const url = new URL(raw.replace(/^ws(s?):\/\//, "http$1://"));
    url.search = "";
    url.hash = "";
    return url.toString().replace(/\/$/, "");
  } catch {
    return null;
  }
}

/** The `/get-messages` URL of an agent address. */
export function messagesUrl(httpAddress: string): string {
  return `${httpAddress}/get-messages`;
}

/** One hop of a sub-agent address: the child agent's class and instance name. */
export interface SubAgentStep {
  /** The child's class name, e.g. `"ChatAgent"` (kebab-cased in the URL). */
  agent: string;
  /** The child instance's name. */
  name: string;
}

const SUB_SEGMENT = "sub";
const warnedSteps = new Set<string>();

function warnStep(problem: string): void {
  if (warnedSteps.has(problem)) return;
  warnedSteps.add(problem);
  console.warn(`[agents-vue] sub: ${problem}`);
}

/** A plain copy of a sub-agent chain (refs and reactive arrays unwrapped), or `[]`. */
export function readSubChain(sub: ReadonlyArray<SubAgentStep> | null | undefined): SubAgentStep[] {
  if (sub == null) return [];
  if (!Array.isArray(sub)) {
    warnStep(
      process.env.NODE_ENV !== "production"
        ? `expected an array of { agent, name } steps, got ${typeof sub}; connecting to the root agent.`
        : "not an array; connecting to the root agent."
    );
    return [];
  }
  return sub.map((step, index) => {
    const agent = typeof step?.agent === "string" ? step.agent : "";
    const name = typeof step?.name === "string" ? step.name : "";
    if (!agent || !name) {
      warnStep(
        process.env.NODE_ENV !== "production"
          ? `step ${index} needs a non-empty "agent" and "name" (got ${JSON.stringify(step)}); its URL segment is empty.`
          : `step ${index} lacks "agent" or "name".`
      );
    } else if (agentNameToKebab(agent) === SUB_SEGMENT) {
      warnStep(
        process.env.NODE_ENV !== "production"
          ? `step ${index}'s class "${agent}" kebab-cases to "sub", the reserved separator; the server cannot route it.`
          : `step ${index}'s class is "sub" in the URL; the server cannot route it.`
      );
    }
    return { agent, name };
  });
}

/**
 * The URL path below the root agent for a sub-agent chain, followed by
 * `path`: `sub/<child-class>/<child-name>/…/<path>` (upstream's `/sub/`
 * routing, which the parent forwards to its facet). Without a chain it is
 * `path` itself.
 */
export function subAgentPath(sub: ReadonlyArray<SubAgentStep>, path: string | undefined): string | undefined {
  if (sub.length === 0) return path;
  const chain = sub
    .map((step) => `${SUB_SEGMENT}/${agentNameToKebab(step.agent)}/${encodeURIComponent(step.name)}`)
    .join("/");
  if (!path) return chain;
  return `${chain}/${path.replace(/^\/+/, "")}`;
}
