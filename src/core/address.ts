/** Upstream's class-name to URL-segment rule (`ChatAgent` → `chat-agent`, `MY_AGENT` → `my-agent`). */
export function agentNameToKebab(name: string): string {
  if (name === name.toUpperCase() && name !== name.toLowerCase()) {
    return name.toLowerCase().replace(/_/g, "-");
  }
  let result = name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  if (result.startsWith("-")) result = result.slice(1);
  return result.replace(/_/g, "-").replace(/-$/, "");
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
  let raw: string | undefined;
  try {
    raw = typeof socket.getHttpUrl === "function" ? socket.getHttpUrl() : socket._pkurl;
  } catch {
    raw = undefined;
  }
  if (!raw) return null;
  try {
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
