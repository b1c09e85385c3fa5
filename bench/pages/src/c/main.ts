// C: the floor. A bare WebSocket client with no framework: it reads the
// stored transcript, parses the same `cf_agent_*` frames, appends the text
// deltas to a text node once per animation frame, acknowledges a resume, and
// reconnects at once on a drop.
import { register } from "../harness";
import type { UIMessage } from "ai";
import type { MountConfig } from "../harness";
import { AGENT, textOf } from "../text";

interface Shown {
  message: UIMessage;
  element: HTMLDivElement;
  text: Text;
}

const kebab = AGENT.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
const randomId = () => Math.random().toString(36).slice(2, 10);

class FloorChat {
  private readonly shown: Shown[] = [];
  private readonly byId = new Map<string, Shown>();
  /** Request id → the assistant message its chunks go to. */
  private readonly replies = new Map<string, Shown>();
  private readonly container = document.createElement("div");
  private socket: WebSocket | null = null;
  private listeners: AbortController | null = null;
  private closed = false;
  /** Text received since the last paint, per reply: written once per animation frame. */
  private readonly pending = new Map<Shown, string>();
  private frame = 0;

  constructor(private readonly config: MountConfig) {
    this.container.id = "chat";
    document.getElementById("app")!.append(this.container);
    this.connect();
  }

  private get base(): string {
    return `${this.config.host}/agents/${kebab}/${this.config.name}`;
  }

  private connect(): void {
    void this.load();
    const socket = new WebSocket(`ws://${this.base}`);
    const listeners = new AbortController();
    const { signal } = listeners;
    socket.addEventListener("message", (event) => this.onFrame(String(event.data)), { signal });
    socket.addEventListener(
      "close",
      () => {
        listeners.abort();
        if (!this.closed) this.connect();
      },
      { signal }
    );
    this.socket = socket;
    this.listeners = listeners;
  }

  private async load(): Promise<void> {
    const response = await fetch(`http://${this.base}/get-messages`);
    const stored = (await response.json()) as UIMessage[];
    if (this.closed) return;
    const storedIds = new Set(stored.map((message) => message.id));
    const live = this.shown.filter((entry) => !storedIds.has(entry.message.id));
    const next = [...stored.map((message) => this.byId.get(message.id) ?? this.create(message)), ...live];
    this.shown.splice(0, this.shown.length, ...next);
    this.container.replaceChildren(...next.map((entry) => entry.element));
  }

  private create(message: UIMessage): Shown {
    const element = document.createElement("div");
    element.className = "msg";
    element.dataset.role = message.role;
    const text = document.createTextNode(textOf(message));
    element.append(text);
    const entry = { message, element, text };
    this.byId.set(message.id, entry);
    return entry;
  }

  private append(message: UIMessage): Shown {
    const entry = this.create(message);
    this.shown.push(entry);
    this.container.append(entry.element);
    return entry;
  }

  private replyFor(requestId: string, messageId?: string): Shown {
    let entry = this.replies.get(requestId);
    if (!entry) {
      entry = this.append({ id: messageId ?? requestId, role: "assistant", parts: [{ type: "text", text: "" }] });
      this.replies.set(requestId, entry);
    }
    return entry;
  }

  private onFrame(data: string): void {
    const frame = JSON.parse(data) as { type?: string; id?: string; body?: string; done?: boolean };
    switch (frame.type) {
      case "cf_agent_use_chat_response": {
        if (!frame.id || !frame.body) return;
        const chunk = JSON.parse(frame.body) as { type: string; delta?: string; messageId?: string };
        if (chunk.type === "start") this.replyFor(frame.id, chunk.messageId);
        else if (chunk.type === "text-delta" && chunk.delta) {
          const entry = this.replyFor(frame.id);
          this.pending.set(entry, (this.pending.get(entry) ?? "") + chunk.delta);
          this.frame ||= requestAnimationFrame(this.flush);
        }
        return;
      }
      case "cf_agent_stream_resuming":
        this.socket?.send(JSON.stringify({ type: "cf_agent_stream_resume_ack", id: frame.id }));
        return;
      default:
    }
  }

  private readonly flush = () => {
    this.frame = 0;
    for (const [entry, text] of this.pending) entry.text.appendData(text);
    this.pending.clear();
  };

  send(text: string): void {
    this.flush();
    // Replies were streamed into their text nodes; copy their text back.
    for (const entry of this.replies.values()) entry.message.parts = [{ type: "text", text: entry.text.data }];
    this.append({ id: randomId(), role: "user", parts: [{ type: "text", text }] });
    const body = JSON.stringify({ messages: this.shown.map((entry) => entry.message), trigger: "submit-message" });
    this.socket?.send(JSON.stringify({ id: randomId(), init: { method: "POST", body }, type: "cf_agent_use_chat_request" }));
  }

  close(): void {
    this.closed = true;
    cancelAnimationFrame(this.frame);
    this.listeners?.abort();
    // With a status code: the agent answers a bare close() (1005) with no close frame.
    this.socket?.close(1000);
    this.socket = null;
    this.container.remove();
  }
}

let chat: FloorChat | null = null;

register({
  name: "C",
  mount(config) {
    chat?.close();
    chat = new FloorChat(config);
  },
  unmount() {
    chat?.close();
    chat = null;
  },
  send(text) {
    chat?.send(text);
  }
});
