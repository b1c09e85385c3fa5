import { type App, getCurrentInstance } from "vue";
import { onDispose } from "../lifecycle";
import type { AgentSocket } from "./connection";

/**
 * What a chat records for Vue Devtools, in development builds only: every
 * use sits behind a `process.env.NODE_ENV` test (folded in production, so
 * bundlers drop it) and behind the Devtools hook being there. The inspector
 * that shows it (`src/devtools/chat-inspector.ts`) is loaded with `import()`
 * once the hook is found; the probe keeps what happened before it attached.
 */

/** The global hook Vue Devtools (the browser extension, or the Vite plugin) puts on the page. */
export interface DevtoolsHook {
  emit(event: string, ...args: unknown[]): void;
}

/** One thing a chat did, for the Devtools timeline (frames as they went over the socket; the inspector parses them). */
export type ProbeEvent =
  | { kind: "frame-in" | "frame-out"; time: number; data: unknown }
  | { kind: "socket"; time: number; state: "open" | "closed"; code?: number }
  | { kind: "read"; time: number; phase: "started" | "answered" | "failed"; first: boolean; count?: number; error?: unknown };

/** Records a chat's frames, socket events and reads; hands them to the inspector once it attached. */
export class ChatProbe {
  /** Events from before the inspector attached (it loads once the hook is found, moments later). */
  readonly #kept: ProbeEvent[] = [];
  #sink: ((event: ProbeEvent) => void) | null = null;
  #unfollow: (() => void) | null = null;
  /** The chat was disposed: the inspector, if it loads now, shows nothing. */
  disposed = false;
  /** Takes the chat out of the inspector (set by the inspector). */
  detach: (() => void) | null = null;

  constructor(
    readonly app: App,
    readonly hook: DevtoolsHook
  ) {}

  record(event: ProbeEvent): void {
    if (this.#sink) this.#sink(event);
    else this.#kept.push(event);
  }

  /** The inspector takes the events: those kept so far, then each as it happens. */
  attach(sink: (event: ProbeEvent) => void): void {
    this.#sink = sink;
    this.#kept.splice(0).forEach(sink);
  }

  /** Follows a socket's frames both ways and its opens and closes (the last socket followed only). */
  follow(socket: AgentSocket | null): void {
    this.#unfollow?.();
    this.#unfollow = null;
    if (!socket) return;
    const listeners: Array<[string, (event: MessageEvent) => void]> = [
      ["message", (event) => this.record({ kind: "frame-in", time: Date.now(), data: event.data })],
      ["open", () => this.record({ kind: "socket", time: Date.now(), state: "open" })],
      ["close", (event) => this.record({ kind: "socket", time: Date.now(), state: "closed", code: (event as { code?: number }).code })]
    ];
    for (const [type, listener] of listeners) socket.addEventListener(type, listener);
    // Frames out: the socket's own `send`, wrapped while followed (a wrapper another chat put on top stays, passing through).
    const target = socket as { send: AgentSocket["send"] };
    const original = target.send;
    let active = true;
    const wrapped = (data: string) => {
      if (active) this.record({ kind: "frame-out", time: Date.now(), data });
      return original.call(socket, data);
    };
    target.send = wrapped;
    this.#unfollow = () => {
      active = false;
      for (const [type, listener] of listeners) socket.removeEventListener(type, listener);
      if (target.send === wrapped) target.send = original;
    };
  }

  /** A transcript reader that reports its reads. */
  reader<M>(read: (() => Promise<M[]>) | undefined, first: boolean): (() => Promise<M[]>) | undefined {
    return (
      read &&
      (() => {
        this.record({ kind: "read", time: Date.now(), phase: "started", first });
        return read().then(
          (messages) => (this.record({ kind: "read", time: Date.now(), phase: "answered", first, count: messages.length }), messages),
          (error: unknown) => {
            this.record({ kind: "read", time: Date.now(), phase: "failed", first, error });
            throw error;
          }
        );
      })
    );
  }

  /** Loads the inspector (a chunk of its own) and shows this chat or connection in it, until disposed. */
  inspect(show: (inspector: typeof import("../devtools/chat-inspector")) => void): void {
    onDispose(() => this.dispose());
    void import("../devtools/chat-inspector").then(show, (error: unknown) => console.warn("[agents-vue] Vue Devtools support did not load:", error));
  }

  dispose(): void {
    this.disposed = true;
    this.detach?.();
    this.follow(null);
    this.#sink = null;
    this.#kept.length = 0;
  }
}

/** A probe for a chat set up in a component while Devtools is on the page (its global hook is there), else `null`. */
export function devtoolsProbe(): ChatProbe | null {
  const hook = (globalThis as Record<string, unknown>)["__VUE_DEVTOOLS_GLOBAL_HOOK__"] as Partial<DevtoolsHook> | undefined;
  const app = getCurrentInstance()?.appContext.app;
  return typeof hook?.emit === "function" && app ? new ChatProbe(app, hook as DevtoolsHook) : null;
}
