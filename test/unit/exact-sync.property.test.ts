/**
 * Exact sync as a property (issue 18): an ordered server's versioned frames
 * reach the model alone with arbitrary gaps and delays (lost, late, out of
 * order), the model asks for snapshots when it sees a gap, and the answers
 * come late too. Once the latest version has reached it and every snapshot
 * was answered, it shows the server's latest transcript, at that version.
 */
import type { UIMessage } from "ai";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChatModel, type Effect, type View } from "../../src/core/model";
import { applyMessageUpdate, applySnapshot, receivedClear } from "../../src/core/model/transcript-rules";
import { mergeStoredWins } from "../../src/core/transcript";
import type { SessionSettings } from "../../src/core/session";

const RUNS = Number(process.env.EXACT_RUNS ?? 2_000);
const SEED = Number(process.env.SEED ?? 20_261_201);

type Frame =
  | { kind: "messages"; messages: UIMessage[]; version: number }
  | { kind: "updated"; message: UIMessage; version: number }
  | { kind: "clear"; version: number };

const text = (id: string, body: string, role: UIMessage["role"] = "user"): UIMessage => ({ id, role, parts: [{ type: "text", text: body }] });

/** A plain array as the working list, and ports that record what the model asks for. */
function model() {
  const list = {
    messages: [] as UIMessage[],
    replaceMessage(index: number, message: UIMessage) {
      this.messages[index] = message;
    },
    pushMessage(message: UIMessage) {
      this.messages.push(message);
    }
  };
  const snapshots: number[] = [];
  const settings = { resume: true, resyncOnReconnect: true, mergeMessages: mergeStoredWins } as unknown as SessionSettings<UIMessage>;
  const view: View<UIMessage> = {
    settings: () => settings,
    status: () => "ready",
    loading: () => false,
    resuming: () => false,
    canRead: () => true
  };
  const perform = (effect: Effect) => {
    if (effect.kind === "read") throw new Error("exact sync reads nothing over HTTP");
    if (effect.kind === "snapshot") snapshots.push(snapshots.length);
    if (effect.kind === "call") effect.run();
  };
  const m = new ChatModel(list, view, perform, () => "local-id");
  return { m, list, snapshots };
}

/** The server's history: one transcript per version, and the frame each version went out as. */
const history = fc
  .array(
    fc.oneof(
      { arbitrary: fc.record({ op: fc.constant("append" as const), body: fc.string({ maxLength: 4 }) }), weight: 4 },
      { arbitrary: fc.record({ op: fc.constant("edit" as const), at: fc.nat(), body: fc.string({ maxLength: 4 }) }), weight: 3 },
      { arbitrary: fc.record({ op: fc.constant("clear" as const) }), weight: 1 }
    ),
    { minLength: 1, maxLength: 12 }
  )
  .map((ops) => {
    const transcripts: UIMessage[][] = [[]];
    const frames: Frame[] = [];
    let ids = 0;
    for (const op of ops) {
      const before = transcripts.at(-1)!;
      const version = transcripts.length;
      if (op.op === "clear") {
        transcripts.push([]);
        frames.push({ kind: "clear", version });
      } else if (op.op === "edit" && before.length > 0) {
        const target = before[op.at % before.length]!;
        const edited = text(target.id, `${op.body}!`, target.role);
        transcripts.push(before.map((message) => (message.id === target.id ? edited : message)));
        frames.push({ kind: "updated", message: edited, version });
      } else {
        const next = [...before, text(`m${++ids}`, op.body, ids % 2 ? "user" : "assistant")];
        transcripts.push(next);
        frames.push({ kind: "messages", messages: next, version });
      }
    }
    return { transcripts, frames };
  });

/** What reaches the client: each version's frame or not (a gap), in a shuffled order (delays). */
const delivery = history.chain(({ transcripts, frames }) =>
  fc.record({
    transcripts: fc.constant(transcripts),
    frames: fc.constant(frames),
    // The latest version always arrives (a socket sees it, or the next connect-time frame carries it).
    kept: fc.array(fc.boolean(), { minLength: frames.length, maxLength: frames.length }),
    order: fc.array(fc.nat(), { minLength: frames.length, maxLength: frames.length }),
    answerAfter: fc.array(fc.nat({ max: 3 }), { maxLength: 20 })
  })
);

function deliver(m: ChatModel<UIMessage>, frame: Frame) {
  if (frame.kind === "messages") applySnapshot(m, structuredClone(frame.messages), false, frame.version);
  else if (frame.kind === "updated") applyMessageUpdate(m, structuredClone(frame.message), frame.version);
  else receivedClear(m, frame.version);
}

describe("exact sync: versions with gaps and delays", () => {
  it(`converges to the latest version every time (${RUNS} runs, seed ${SEED})`, () => {
    fc.assert(
      fc.property(delivery, ({ transcripts, frames, kept, order, answerAfter }) => {
        const { m, list, snapshots } = model();
        // The connect-time transcript: version 0, empty.
        applySnapshot(m, [], true, 0);
        const latest = frames.length;
        const arriving = frames
          .map((frame, i) => ({ frame, key: order[i]! }))
          .filter(({ frame }, i) => kept[i] || frame.version === latest)
          .toSorted((a, b) => a.key - b.key)
          .map(({ frame }) => frame);
        // Snapshot answers carry the server's latest transcript, and arrive a few frames late.
        const answered = new Set<number>();
        const due: Array<{ at: number; request: number }> = [];
        let step = 0;
        const answerDue = () => {
          for (const request of snapshots) {
            if (answered.has(request)) continue;
            answered.add(request);
            due.push({ at: step + (answerAfter[request % Math.max(answerAfter.length, 1)] ?? 0), request });
          }
          for (const entry of due.filter((d) => d.at <= step)) {
            due.splice(due.indexOf(entry), 1);
            applySnapshot(m, structuredClone(transcripts[latest]!), false, latest);
          }
        };
        for (const frame of arriving) {
          deliver(m, frame);
          step++;
          answerDue();
        }
        // Quiescence: every request answered.
        while (due.length > 0 || snapshots.some((request) => !answered.has(request))) {
          step += 4;
          answerDue();
        }
        expect(m.base.version).toBe(latest);
        expect(list.messages).toEqual(transcripts[latest]);
      }),
      { numRuns: RUNS, seed: SEED }
    );
  }, 120_000);
});
