import { afterAll, describe, expect, it } from "vitest";
import { play, strictly } from "../support/model-script";
import { type GAPS, World, type WorldOptions, violations } from "../support/model-world";

/**
 * Known limitations (`GAPS` in `test/support/world/shared.ts`, and
 * `RELIABILITY.md`): counterexamples of the model's property test whose cause
 * lies outside this client. Each scenario hits its limitation, breaks an
 * invariant held strictly, and nothing else: with the limitation excused, the
 * run holds every other invariant. A fix makes the second expectation fail;
 * its scenario then moves to `model.regressions.test.ts`.
 */
describe("known limitations of the model", () => {
  afterAll(() => World.release());
  const cases: Array<[keyof typeof GAPS, string, Partial<WorldOptions & { seed: number }>]> = [
    ["stale-list-restores-cleared", "send, clear, up, up, otherSetMessages 0 0, otherSetMessages 740 549", {}],
    // Seed 1623291949 of `npm run test:model`, run 69323: the same through another tab's regenerate of a stale list, stopped before its reply.
    ["stale-list-restores-cleared", "send, clear, up, up, otherRegenerate 22 0, turn, otherStop", {}],
    // Run 181999 of the same seed: another tab's send of a stale list; the socket drop hid its broadcast, so only the read shows the new message.
    ["stale-list-restores-cleared", "otherSend 0 0, deliver 1, clear, cut, up, otherSend 145 0, turn, otherStop", {}]
  ];
  for (const [gap, steps, options] of cases) {
    it(`${gap}: ${steps}`, async () => {
      const world = await play(steps, options);
      expect(world.gaps.has(gap)).toBe(true);
      expect(strictly(world)).not.toEqual([]);
      expect(violations(world)).toEqual([]);
    });
  }
});

