import type { AgentSocket } from "../../src/core/connection";

/**
 * A scripted socket for frame orderings a real server cannot be made to
 * produce. It records what the client sends and lets a test push frames,
 * open and close the connection.
 */
export class FakeSocket implements AgentSocket {
  private readonly events = new EventTarget();
  readyState = 0;
  readonly sent: Array<Record<string, unknown>> = [];
  readonly raw: string[] = [];
  private buffer: string[] = [];
  connectionError: Error | null = null;
  shouldReconnect = true;
  _pkurl = "ws://fake.test/agents/fake-agent/room";
  _pk = "fake-pk";
  agent = "fake-agent";
  name = "room";

  private readonly listeners = new Set<unknown>();

  addEventListener(type: string, listener: (event: MessageEvent) => void, options?: { signal?: AbortSignal }) {
    this.listeners.add(listener);
    this.events.addEventListener(type, listener as EventListener, options);
  }

  removeEventListener(type: string, listener: (event: MessageEvent) => void) {
    this.listeners.delete(listener);
    this.events.removeEventListener(type, listener as EventListener);
  }

  /** Listeners still attached (a leak check after unmount). */
  get listenerCount(): number {
    return this.listeners.size;
  }

  private dispatchEvent(event: Event) {
    this.events.dispatchEvent(event);
  }

  send(data: string): boolean {
    if (this.readyState !== 1) {
      this.buffer.push(data);
      return false;
    }
    this.record(data);
    return true;
  }

  private record(data: string) {
    this.raw.push(data);
    try {
      this.sent.push(JSON.parse(data));
    } catch {
      this.sent.push({ type: "non-json", data });
    }
  }

  /** Frames of one type the client sent. */
  sentOf(type: string) {
    return this.sent.filter((frame) => frame.type === type);
  }

  open() {
    this.readyState = 1;
    // PartySocket flushes its buffer before it dispatches `open`.
    for (const data of this.buffer.splice(0)) this.record(data);
    this.dispatchEvent(new Event("open"));
  }

  /** The server side closes (or the network drops). */
  drop(code = 1006) {
    this.readyState = 3;
    const event = new Event("close") as Event & { code: number; reason: string; wasClean: boolean };
    Object.assign(event, { code, reason: "", wasClean: false });
    this.dispatchEvent(event);
  }

  close() {
    this.shouldReconnect = false;
    this.drop(1000);
  }

  /** The server sends a frame (an object is JSON-encoded). */
  push(frame: unknown) {
    const data = typeof frame === "string" ? frame : JSON.stringify(frame);
    this.dispatchEvent(new MessageEvent("message", { data }));
  }

  /** Sends one response chunk for a request. */
  chunk(id: string, chunk: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    this.push({ type: "cf_agent_use_chat_response", id, body: JSON.stringify(chunk), done: false, ...extra });
  }

  done(id: string, extra: Record<string, unknown> = {}) {
    this.push({ type: "cf_agent_use_chat_response", id, body: "", done: true, ...extra });
  }

}

/** The chunks of a simple text reply. */
export function textReply(messageId: string, text: string[]): Array<Record<string, unknown>> {
  return [
    { type: "start", messageId },
    { type: "text-start", id: "t" },
    ...text.map((delta) => ({ type: "text-delta", id: "t", delta })),
    { type: "text-end", id: "t" },
    { type: "finish" }
  ];
}
