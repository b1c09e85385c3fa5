/**
 * The bench worker: one `AIChatAgent` subclass, `BenchAgent`, tuned for
 * `npm run bench`. No model: the reply is a UI message stream (SSE) written
 * directly, one text delta per read, as fast as the agent consumes it.
 *
 * A user message `stream <n> <tag> [gate]` gets a reply of `n` text deltas
 * (`w0 `, `w1 `, …) ending in `END-<tag>`. With `gate`, the reply stops
 * half-way and waits until a client acknowledges a stream resume (the replay
 * scenario: a client mounted in the middle of the stream), or 20 s.
 *
 * Routes below `/agents/bench-agent/<name>/`:
 * - `POST seed {count, chars?}`: stores `count` messages (on a fresh instance: the transcript);
 * - `POST server-turn {text}`: starts a turn with no client (saveMessages);
 * - `GET progress`: `{ emitted, waiting, turns }` of the current reply.
 */
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { routeAgentRequest, type AgentContext, type Connection, type WSMessage } from "agents";
import type { UIMessage } from "ai";
import { acceptPartialRequests } from "../../../src/server/index.ts";

const COMMAND = /^stream (\d+) (\S+)( gate)?$/;
const GATE_TIMEOUT_MS = 20_000;

function json(data: unknown, status = 200): Response {
  return new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json" } });
}

function textOf(message: UIMessage | undefined): string {
  if (!message) return "";
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** The stored transcript the seed route writes: alternating user/assistant text. */
export function seedMessages(count: number, chars: number): UIMessage[] {
  const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ".repeat(Math.ceil(chars / 55) + 1);
  return Array.from({ length: count }, (_, i) => ({
    id: `seed-${String(i).padStart(5, "0")}`,
    role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
    parts: [{ type: "text" as const, text: `#${i} ${filler.slice(0, chars)}` }]
  }));
}

export class BenchAgent extends AIChatAgent<Cloudflare.Env> {
  private emitted = 0;
  private waiting = false;
  private turns = 0;
  private releaseGate: (() => void) | undefined;

  constructor(ctx: AgentContext, env: Cloudflare.Env) {
    super(ctx, env);
    // The server half of `sendOnlyNewMessages` (agents-vue/server).
    acceptPartialRequests(this);
    // A client that acknowledged a resume has been sent the buffered half of
    // a gated reply (the replay runs inside the ack handler): let the rest go.
    const handle = this.onMessage.bind(this);
    this.onMessage = async (connection: Connection, message: WSMessage) => {
      await handle(connection, message);
      if (typeof message === "string" && message.includes("cf_agent_stream_resume_ack")) this.releaseGate?.();
    };
  }

  async onChatMessage(_onFinish: unknown, _options?: OnChatMessageOptions): Promise<Response | undefined> {
    this.turns++;
    const text = textOf(this.messages.findLast((m) => m.role === "user")).trim();
    const command = COMMAND.exec(text);
    const count = command ? Number(command[1]) : 1;
    const tag = command ? command[2] : "none";
    const gateAt = command?.[3] ? Math.floor(count / 2) : -1;
    const encoder = new TextEncoder();
    const event = (chunk: Record<string, unknown>) => encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
    const head = [{ type: "start" }, { type: "start-step" }, { type: "text-start", id: "t" }];
    const tail = [{ type: "text-end", id: "t" }, { type: "finish-step" }, { type: "finish", finishReason: "stop" }];
    let gate: Promise<void> | undefined;
    if (gateAt >= 0) {
      gate = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, GATE_TIMEOUT_MS);
        this.releaseGate = () => {
          clearTimeout(timer);
          this.releaseGate = undefined;
          resolve();
        };
      });
    }
    this.emitted = 0;
    this.waiting = false;
    let step = 0;
    const total = head.length + count + tail.length;
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const i = step - head.length;
        if (i === gateAt && gate) {
          this.waiting = true;
          await gate;
          this.waiting = false;
          gate = undefined;
        }
        if (i >= 0 && i < gateAt) {
          // Before the gate no client is watching: write the first half in
          // batches of whole events (the agent splits a read into lines).
          const end = Math.min(gateAt, i + 100);
          const lines: string[] = [];
          for (let k = i; k < end; k++) lines.push(`data: ${JSON.stringify({ type: "text-delta", id: "t", delta: `w${k} ` })}\n\n`);
          controller.enqueue(encoder.encode(lines.join("")));
          this.emitted = end;
          step += end - i;
          return;
        }
        if (step < head.length) controller.enqueue(event(head[step]!));
        else if (i < count) {
          const delta = i === count - 1 ? `END-${tag}` : `w${i} `;
          controller.enqueue(event({ type: "text-delta", id: "t", delta }));
          this.emitted = i + 1;
        } else controller.enqueue(event(tail[i - count]!));
        step++;
        if (step === total) controller.close();
      }
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }

  async onRequest(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname.split("/").filter(Boolean).slice(3).join("/");
    const method = request.method.toUpperCase();
    if (path === "progress" && method === "GET") {
      return json({ emitted: this.emitted, waiting: this.waiting, turns: this.turns, stored: this.messages.length });
    }
    if (path === "seed" && method === "POST") {
      const body = (await request.json()) as { count?: number; chars?: number };
      const messages = seedMessages(Number(body.count ?? 0), Number(body.chars ?? 120));
      await this.persistMessages(messages);
      return json({ ok: true, stored: this.messages.length });
    }
    if (path === "server-turn" && method === "POST") {
      const body = (await request.json()) as { text?: string };
      const message: UIMessage = {
        id: `srv-${Date.now().toString(36)}`,
        role: "user",
        parts: [{ type: "text", text: String(body.text ?? "stream 1 srv") }]
      };
      this.saveMessages((current) => [...current, message]).catch((error: unknown) => {
        console.error("server-turn failed", error);
      });
      return json({ ok: true, messageId: message.id }, 202);
    }
    return json({ error: "not found", path }, 404);
  }
}

function withCors(request: Request, response: Response): Response {
  if (response.status === 101 || response.webSocket) return response;
  const headers = new Headers(response.headers);
  headers.set("Access-Control-Allow-Origin", request.headers.get("Origin") ?? "*");
  headers.set("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  headers.set("Access-Control-Allow-Headers", request.headers.get("Access-Control-Request-Headers") ?? "*");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

export default {
  async fetch(request: Request, env: Cloudflare.Env): Promise<Response> {
    if (request.method === "OPTIONS") return withCors(request, new Response(null, { status: 204 }));
    if (new URL(request.url).pathname === "/health") return new Response("ok");
    const response = await routeAgentRequest(request, env, { cors: true });
    return withCors(request, response ?? new Response("Not found", { status: 404 }));
  }
} satisfies ExportedHandler<Cloudflare.Env>;
