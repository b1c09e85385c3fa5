/**
 * A bare WebSocket to one agent instance, for tests that assert what the
 * server puts on the wire (no client library in between). Every frame is
 * kept, in arrival order.
 */
import type { UIMessage } from "ai";
import { vi } from "vitest";
import { agentHost, kebab } from "./e2e";

export type Frame = Record<string, unknown> & { type?: unknown };

export class RawSocket {
  readonly frames: Frame[] = [];
  readonly closed: Promise<CloseEvent>;
  private readonly ws: WebSocket;
  private readonly listeners = new Set<(frame: Frame) => void>();

  private constructor(url: string) {
    this.ws = new WebSocket(url);
    this.closed = new Promise((resolve) => this.ws.addEventListener("close", resolve, { once: true }));
    this.ws.addEventListener("message", (event) => {
      const text = String(event.data);
      let frame: Frame;
      try {
        frame = JSON.parse(text) as Frame;
      } catch {
        frame = { type: "non-json", text };
      }
      this.frames.push(frame);
      for (const listener of this.listeners) listener(frame);
    });
  }

  /** Opens a socket to `/agents/<agent>/<name>` and waits until it is open. */
  static async open(agent: string, name: string, host: string = agentHost()): Promise<RawSocket> {
    const socket = new RawSocket(`ws://${host}/agents/${kebab(agent)}/${encodeURIComponent(name)}`);
    await new Promise<void>((resolve, reject) => {
      socket.ws.addEventListener("open", () => resolve(), { once: true });
      socket.ws.addEventListener("error", () => reject(new Error(`socket to ${agent}/${name} failed`)), { once: true });
    });
    return socket;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** Calls `listener` with every frame from now on; returns a function that stops it. */
  onFrame(listener: (frame: Frame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits for a frame (at index `from` or later) matching `predicate`, and returns it. */
  async waitFor(predicate: (frame: Frame) => boolean, options: { from?: number; timeout?: number } = {}): Promise<Frame> {
    let found: Frame | undefined;
    await vi.waitFor(
      () => {
        found = this.frames.slice(options.from ?? 0).find(predicate);
        if (!found) throw new Error(`no matching frame among ${this.frames.map((f) => String(f.type)).join(", ")}`);
      },
      { timeout: options.timeout ?? 20_000, interval: 20 }
    );
    return found!;
  }

  /** Waits for the `done` frame of request `id`. */
  done(id: string, options: { from?: number; timeout?: number } = {}): Promise<Frame> {
    return this.waitFor((frame) => frame.type === "cf_agent_use_chat_response" && frame.id === id && frame.done === true, options);
  }

  close(): void {
    this.ws.close();
  }
}

/** A chat request frame as `useAgentChat` sends it, with a script for the scripted model. */
export function chatRequest(id: string, messages: UIMessage[], script: Record<string, unknown> = {}): Frame {
  return {
    type: "cf_agent_use_chat_request",
    id,
    init: { method: "POST", body: JSON.stringify({ messages, trigger: "submit-message", script }) }
  };
}

/** A one-part user message. */
export function userMessage(id: string, text: string): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}
