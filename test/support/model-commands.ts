import * as fc from "fast-check";
import type { Command, WorldOptions } from "./model-world";

const nat = fc.nat({ max: 1000 });

/** One command; network and server steps are the common ones, as in a real conversation. */
export const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Command>({ kind: "send" }) },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: "stop" }) },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: "regenerate" }) },
  { weight: 1, arbitrary: nat.map<Command>((pick) => ({ kind: "edit", pick })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "clear" }) },
  { weight: 1, arbitrary: nat.map<Command>((pick) => ({ kind: "setMessages", pick })) },
  { weight: 2, arbitrary: nat.map<Command>((pick) => ({ kind: "toolOutput", pick })) },
  { weight: 3, arbitrary: fc.record({ stale: nat, shape: nat }).map<Command>(({ stale, shape }) => ({ kind: "otherSend", stale, shape })) },
  { weight: 1, arbitrary: fc.record({ stale: nat, shape: nat }).map<Command>(({ stale, shape }) => ({ kind: "otherRegenerate", stale, shape })) },
  { weight: 1, arbitrary: fc.record({ stale: nat, pick: nat, shape: nat }).map<Command>(({ stale, pick, shape }) => ({ kind: "otherEdit", stale, pick, shape })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "otherClear" }) },
  { weight: 1, arbitrary: fc.record({ stale: nat, pick: nat }).map<Command>(({ stale, pick }) => ({ kind: "otherSetMessages", stale, pick })) },
  { weight: 1, arbitrary: fc.record({ pick: nat, autoContinue: fc.boolean() }).map<Command>(({ pick, autoContinue }) => ({ kind: "otherToolOutput", pick, autoContinue })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "otherStop" }) },
  { weight: 8, arbitrary: fc.constant<Command>({ kind: "serverUp" }) },
  { weight: 10, arbitrary: fc.constant<Command>({ kind: "serverTurn" }) },
  { weight: 1, arbitrary: fc.boolean().map<Command>((inBand) => ({ kind: "fail", inBand })) },
  { weight: 12, arbitrary: fc.integer({ min: 1, max: 4 }).map<Command>((count) => ({ kind: "deliver", count })) },
  { weight: 3, arbitrary: nat.map<Command>((pick) => ({ kind: "serveRead", pick })) },
  { weight: 3, arbitrary: nat.map<Command>((pick) => ({ kind: "answerRead", pick })) },
  { weight: 1, arbitrary: nat.map<Command>((pick) => ({ kind: "failRead", pick })) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: "cut" }) },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: "reopen" }) },
  { weight: 3, arbitrary: nat.map<Command>((pick) => ({ kind: "timer", pick })) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 4 }).map<Command>((count) => ({ kind: "store", count })) },
  { weight: 2, arbitrary: nat.map<Command>((keep) => ({ kind: "restart", keep })) }
);

/** A world's options: resume on or off, auto-continue on or off, a first load or not, `persist` or not, and the shapes of this client's replies. */
export const worldOptions: fc.Arbitrary<WorldOptions & { seed: number }> = fc.record({
  resume: fc.boolean(),
  autoContinue: fc.boolean(),
  load: fc.boolean(),
  persist: fc.boolean(),
  replyShapes: fc.array(fc.nat({ max: 7 }), { minLength: 1, maxLength: 4 }),
  seed: fc.nat()
});

export const scenario = fc.record({ options: worldOptions, commands: fc.array(command, { maxLength: 60, size: "max" }) });
