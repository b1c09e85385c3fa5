import { afterAll, describe, expect, it } from "vitest";
import { play, strictly } from "../support/model-script";
import { World } from "../support/model-world";

/**
 * The model's world kills this client and restores it from its durable copy
 * (`restart`, issue 32): the shipped `ChatSession` with `persist` over a store
 * the world owns, disposed as a closing tab disposes it, and a fresh session
 * started from what the store held.
 */
describe("the model's world restarts this client from its persisted state", () => {
  afterAll(() => World.release());

  const persisted = { persist: true, load: true };

  it("a send queued while offline survives a restart and is delivered exactly once", async () => {
    const world = await play("cut, send, store 6, restart, up, up, up, serveRead, answerRead", persisted);
    expect(strictly(world)).toEqual([]);
    const id = world.sent[0]!.id;
    expect(world.server.everHeld.has(id)).toBe(true);
    expect(world.submitted.get(id)).toBe(1);
    expect(world.pages).toBe(2);
    expect(world.cells.cached.value).toBe(false);
  });
});
