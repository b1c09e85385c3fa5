/**
 * Chaos: bad frames (fast-check). A scripted socket feeds a chat arbitrary
 * strings, arbitrary JSON and `cf_agent_*` frames with missing, wrong-typed
 * or huge fields, out-of-order `done`/`replayComplete`, unknown request ids
 * and `__proto__`/`constructor` keys. The chat must never throw, never
 * pollute `Object.prototype`, keep the earlier messages deep-equal, and end
 * out of any stuck state once a valid turn follows. 300 runs inside
 * `npm test`, 10,000 in `npm run test:chaos`.
 */
import type { UIMessage } from "ai";
import * as fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useAgentChat } from "../../src";
import { readFrame } from "../../src/core/frames";
import { Figures, NO_FAILURES, chaosSettings, scenarioSeed, stuckReasons, textParts, until, type ChaosSettings } from "../support/chaos";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

const EARLIER: UIMessage[] = [
  { id: "earlier-user-7f3a9c", role: "user", parts: [{ type: "text", text: "hello" }] },
  { id: "earlier-assistant-7f3a9c", role: "assistant", parts: [{ type: "text", text: "hi there", state: "done" }] }
];

const HUGE = "x".repeat(200_000);
const ids = fc.constantFrom("r1", "r2", "unknown-request", "__proto__", "constructor", "toString", "", "valid-obs");
const anyValue = fc.oneof(
  fc.anything({ maxDepth: 2 }),
  fc.constant(HUGE),
  fc.constant(Number.NaN),
  fc.constant(-1),
  fc.constant(1e308),
  fc.constant(null)
);
/** A field: usually well-typed, sometimes missing or anything at all. */
const field = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: anyValue });

const chunk = fc.oneof(
  fc.record({ type: fc.constant("start"), messageId: field(fc.constantFrom("m-a", "m-b", "__proto__", "constructor")) }),
  fc.record({ type: fc.constantFrom("text-start", "text-end", "reasoning-start", "reasoning-end"), id: field(fc.constantFrom("t", "t2", "__proto__")) }),
  fc.record({ type: fc.constantFrom("text-delta", "reasoning-delta"), id: field(fc.constantFrom("t", "t2", "missing")), delta: field(fc.string()) }),
  fc.record({ type: fc.constantFrom("start-step", "finish-step", "finish", "abort") }),
  fc.record({ type: fc.constant("error"), errorText: field(fc.string()) }),
  fc.record({
    type: fc.constantFrom("tool-input-start", "tool-input-delta", "tool-input-available", "tool-input-error", "tool-output-available", "tool-output-error", "tool-approval-request"),
    toolCallId: field(fc.constantFrom("c1", "c2", "__proto__")),
    toolName: field(fc.constantFrom("weather", "__proto__", "constructor", "toString")),
    input: field(fc.jsonValue({ maxDepth: 2 })),
    output: field(fc.jsonValue({ maxDepth: 2 })),
    inputTextDelta: field(fc.string()),
    approvalId: field(fc.string())
  }),
  fc.record({ type: fc.constantFrom("data-x", "data-__proto__"), id: field(fc.string()), data: anyValue, transient: field(fc.boolean()) }),
  fc.record({ type: fc.constantFrom("source-url", "file", "message-metadata"), url: field(fc.string()), messageMetadata: anyValue }),
  anyValue
);

const part = fc.oneof(
  fc.record({ type: fc.constant("text"), text: field(fc.string()) }),
  fc.record({ type: fc.constantFrom("tool-weather", "tool-__proto__", "step-start"), toolCallId: field(fc.constantFrom("c1", "c2")), state: field(fc.constantFrom("input-available", "output-available")) }),
  anyValue
);
const message = fc.oneof(
  { weight: 4, arbitrary: fc.record({ id: field(ids), role: field(fc.constantFrom("user", "assistant", "system", "tool")), parts: field(fc.array(part, { maxLength: 3 })) }) },
  { weight: 1, arbitrary: anyValue }
);

const chatFrame = fc.oneof(
  fc.record({
    type: fc.constant("cf_agent_use_chat_response"),
    id: field(ids),
    body: field(fc.oneof(chunk.map((c) => JSON.stringify(c) ?? ""), fc.string(), fc.constant(""))),
    done: field(fc.boolean()),
    error: field(fc.boolean()),
    continuation: field(fc.boolean()),
    replay: field(fc.boolean()),
    replayComplete: field(fc.boolean()),
    seq: field(fc.integer({ min: -2, max: 20 })),
    messageIds: field(fc.array(fc.string(), { maxLength: 3 })),
    outcome: field(fc.constantFrom("completed", "error", "aborted", "skipped", "recovering", "bogus"))
  }),
  fc.record({ type: fc.constant("cf_agent_chat_messages"), messages: field(fc.array(message, { maxLength: 3 })), connect: field(fc.boolean()) }),
  fc.record({ type: fc.constant("cf_agent_message_updated"), message: field(message) }),
  fc.record({
    type: fc.constantFrom("cf_agent_stream_resuming", "cf_agent_stream_resume_none", "cf_agent_stream_pending"),
    id: field(ids),
    probeId: field(fc.constantFrom("p1", "unknown-probe")),
    reason: field(fc.constantFrom("idle", "busy", "__proto__"))
  }),
  fc.record({ type: fc.constant("cf_agent_chat_recovering"), recovering: field(fc.boolean()) }),
  fc.record({
    type: fc.constantFrom("cf_agent_chat_request_cancel", "cf_agent_identity", "cf_agent_state", "cf_agent_mcp_servers", "rpc", "cf_agent_unknown"),
    id: field(ids),
    state: anyValue
  })
);

/** Injects `__proto__` and `constructor` keys into a JSON text. */
const POISON = '"__proto__":{"polluted":"yes","toString":"x"},"constructor":{"prototype":{"polluted":"yes"}},';
const poisoned = (text: string, every: number) => {
  let n = 0;
  return text.replace(/\{(?=")/g, (brace) => (n++ % every === 0 ? `{${POISON}` : brace));
};

/** One frame as the socket delivers it: text. */
const rawFrame = fc.oneof(
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 6, arbitrary: chatFrame.map((frame) => JSON.stringify(frame) ?? "null") },
  {
    weight: 2,
    arbitrary: fc.tuple(chatFrame, fc.integer({ min: 1, max: 3 })).map(([frame, every]) => poisoned(JSON.stringify(frame) ?? "{}", every))
  }
);

/** Out-of-order endings for the stream ids the other frames use. */
const endings = fc.array(
  fc.record({ id: ids, kind: fc.constantFrom("done", "replayComplete", "done-error", "done-replay") }).map(({ id, kind }) =>
    JSON.stringify({
      type: "cf_agent_use_chat_response",
      id,
      body: kind === "done-error" ? "boom" : "",
      done: kind !== "replayComplete",
      error: kind === "done-error",
      replay: kind === "done-replay" || kind === "replayComplete",
      replayComplete: kind === "replayComplete"
    })
  ),
  { maxLength: 3 }
);

const prototypeKeys = () => [Object.prototype, Array.prototype, Function.prototype].map((p) => Object.getOwnPropertyNames(p).toSorted().join());

let settings: ChaosSettings;
beforeAll(async () => {
  settings = await chaosSettings();
});

const originalWarn = console.warn;
const originalError = console.error;
afterAll(() => {
  console.warn = originalWarn;
  console.error = originalError;
});

describe("chaos: bad frames", () => {
  it("arbitrary and malformed frames never throw, pollute or lose earlier messages; a valid turn unsticks the chat", async () => {
    const figures = new Figures("bad frames");
    const runs = settings.full ? 10_000 : 300;
    const baseline = prototypeKeys();
    let frameFailures = 0;
    // The library reports a frame it failed to apply with console.error: that is a throw it caught.
    console.error = (...args: unknown[]) => {
      if (String(args[0]).includes("Failed to apply")) frameFailures++;
    };
    console.warn = () => {};
    const uncaught: string[] = [];
    const onError = (event: ErrorEvent) => uncaught.push(String(event.message));
    const onRejection = (event: PromiseRejectionEvent) => uncaught.push(String(event.reason));
    window.addEventListener("error", onError);
    window.addEventListener("unhandledrejection", onRejection);
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(rawFrame, { minLength: 1, maxLength: 12 }), endings, async (frames, ends) => {
          const all = [...frames, ...ends];
          const notes: string[] = [];
          let other = 0;
          let lost = 0;
          let stuck = 0;
          const failuresBefore = frameFailures;
          const uncaughtBefore = uncaught.length;
          const socket = new FakeSocket();
          const mounted = mountComposable(() =>
            useAgentChat({ agent: socket, initialMessages: structuredClone(EARLIER), throttle: false })
          );
          const chat = mounted.result;
          try {
            socket.open();
            const probe = socket.sentOf("cf_agent_stream_resume_request")[0];
            socket.push({ type: "cf_agent_stream_resume_none", reason: "idle", probeId: probe?.probeId });
            await until(() => chat.status.value === "ready", 2_000, 0);
            for (const data of all) {
              try {
                socket.push(data);
              } catch (error) {
                other++;
                notes.push(`push threw: ${String(error)}`);
              }
            }
            await new Promise((resolve) => setTimeout(resolve, 0));
            if (frameFailures > failuresBefore) {
              other++;
              notes.push(`the chat caught ${frameFailures - failuresBefore} exceptions applying frames`);
            }
            if (prototypeKeys().join("|") !== baseline.join("|") || ({} as Record<string, unknown>).polluted !== undefined) {
              other++;
              notes.push("a prototype was polluted");
            }
            // Earlier messages stay: deep-equal, unless a valid transcript frame replaced
            // them; a continuation may only append parts to the last assistant.
            const replaced = all.some((data) => {
              let parsed: unknown;
              try {
                parsed = JSON.parse(data);
              } catch {
                return false;
              }
              const reading = readFrame(parsed);
              return reading.kind === "chat" && (reading.frame.kind === "messages" || reading.frame.kind === "clear");
            });
            if (!replaced) {
              const now = chat.messages.value.slice(0, EARLIER.length);
              const ok = EARLIER.every((earlier, i) => {
                const current = now[i];
                if (!current || current.id !== earlier.id || current.role !== earlier.role) return false;
                const prefix = current.parts.slice(0, earlier.parts.length);
                return JSON.stringify(prefix) === JSON.stringify(earlier.parts);
              });
              if (!ok) {
                lost++;
                notes.push(`earlier messages changed: ${JSON.stringify(now).slice(0, 300)}`);
              }
            }
            // A valid turn follows: another client's complete turn, then one of our own.
            for (const c of textReply("valid-a", ["valid ", "turn"])) socket.chunk("valid-obs-turn", c);
            socket.done("valid-obs-turn");
            const sent = chat.sendMessage({ text: "after the storm" });
            await until(() => socket.sentOf("cf_agent_use_chat_request").length > 0, 3_000, 1);
            const request = socket.sentOf("cf_agent_use_chat_request").at(-1) as { id?: string } | undefined;
            if (request?.id) {
              for (const c of textReply("own-reply", ["all ", "good"])) socket.chunk(request.id, c);
              socket.done(request.id);
              await Promise.race([sent, until(() => false, 3_000)]);
            }
            await until(() => stuckReasons(chat).length === 0, 3_000, 1);
            const reasons = stuckReasons(chat);
            const last = chat.messages.value.at(-1);
            if (!request?.id) reasons.push("the send after the valid turn never went out");
            else if (!last || textParts(last).join("") !== "all good") reasons.push(`the reply is "${last ? textParts(last).join("") : ""}"`);
            if (reasons.length > 0) {
              stuck++;
              notes.push(...reasons);
            }
            if (uncaught.length > uncaughtBefore) {
              other++;
              notes.push(...uncaught.slice(uncaughtBefore));
            }
          } finally {
            mounted.unmount();
          }
          figures.trial({ faults: all.length, lost, stuck, other, notes: notes.map((n) => `${n} after ${JSON.stringify(all).slice(0, 600)}`) });
          // The full run counts every run (no early stop); the quick one shrinks a failure.
          return settings.full || lost + stuck + other === 0;
        }),
        { numRuns: runs, seed: scenarioSeed(settings.seed, "frames") | 0 }
      );
    } finally {
      window.removeEventListener("error", onError);
      window.removeEventListener("unhandledrejection", onRejection);
      console.warn = originalWarn;
      console.error = originalError;
    }
    expect(await figures.report()).toEqual(NO_FAILURES);
  }, 1_800_000);
});
