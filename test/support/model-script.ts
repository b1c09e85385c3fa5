import { type Command, World, type WorldOptions, violations } from "./model-world";

const defaults: WorldOptions & { seed: number } = { resume: false, autoContinue: false, load: false, persist: false, replyShapes: [0], seed: 0 };

/** Runs a script (see `script`) in a fresh world and lets it quiesce. Options default to resume off, no first load, no `persist`, one-word replies. */
export async function play(steps: string, options: Partial<WorldOptions & { seed: number; trace: boolean }> = {}): Promise<World> {
  const world = await World.create({ ...defaults, ...options });
  for (const command of script(steps)) await world.run(command);
  await world.quiesce();
  return world;
}

/** Every invariant, with nothing excused: neither an open counterexample nor what the real system does not promise. */
export const strictly = (world: World): string[] => violations(world, true, false);

/**
 * A counterexample as a line of words, for regression tests to read: `send`,
 * `stop`, `regenerate`, `clear`, `cut`, `reopen`, `up` (the server takes one
 * frame), `turn` (the server's turns move one step), `deliver N`, `fail`
 * (thrown) or `fail in-band`, `edit P`, `setMessages P`, `toolOutput P`,
 * `serveRead P`, `answerRead P`, `failRead P` (the network drops a read), `timer`, `store N` (the durable store
 * completes N operations, default 1), `restart K` (the tab dies, K picks how many of
 * its uncommitted writes commit, and a fresh page restores it), and other clients' `otherSend
 * [stale] [shape]`, `otherRegenerate [stale]`, `otherEdit stale pick`,
 * `otherClear`, `otherSetMessages stale pick`, `otherToolOutput pick
 * [continue]`, `otherStop`.
 */
export function script(text: string): Command[] {
  return text
    .split(",")
    .map((step) => step.trim())
    .filter(Boolean)
    .map((step): Command => {
      const [word, ...rest] = step.split(/\s+/);
      const n = (i: number) => Number(rest[i] ?? 0);
      switch (word) {
        case "send":
        case "stop":
        case "regenerate":
        case "clear":
        case "cut":
        case "reopen":
        case "otherClear":
        case "otherStop":
          return { kind: word };
        case "store":
          return { kind: "store", count: n(0) || 1 };
        case "restart":
          return { kind: "restart", keep: n(0) };
        case "up":
          return { kind: "serverUp" };
        case "turn":
          return { kind: "serverTurn" };
        case "deliver":
          return { kind: "deliver", count: n(0) || 1 };
        case "fail":
          return { kind: "fail", inBand: rest[0] === "in-band" };
        case "edit":
        case "setMessages":
        case "toolOutput":
        case "serveRead":
        case "answerRead":
        case "failRead":
        case "timer":
          return { kind: word, pick: n(0) };
        case "otherSend":
        case "otherRegenerate":
          return { kind: word, stale: n(0), shape: n(1) };
        case "otherEdit":
          return { kind: "otherEdit", stale: n(0), pick: n(1), shape: n(2) };
        case "otherSetMessages":
          return { kind: "otherSetMessages", stale: n(0), pick: n(1) };
        case "otherToolOutput":
          return { kind: "otherToolOutput", pick: n(0), autoContinue: rest[1] === "continue" };
        default:
          throw new Error(`unknown step "${step}"`);
      }
    });
}
