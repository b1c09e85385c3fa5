import type { UIMessage } from "ai";

/** A message as the benches show it: its text parts, joined. */
export function textOf(message: UIMessage): string {
  let text = "";
  for (const part of message.parts) if (part.type === "text") text += part.text;
  return text;
}

/** The agent class every client talks to. */
export const AGENT = "BenchAgent";
