import { CHAT_MESSAGE_TYPES as upstream } from "agents/chat";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/core/frame-types";

describe("frame types", () => {
  it("are upstream's CHAT_MESSAGE_TYPES, name for name and value for value", () => {
    // Our copy keeps an esbuild app from bundling agents/chat; it must not drift from the wire upstream speaks.
    const names = Object.keys(ours);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      expect(upstream, `agents/chat has no CHAT_MESSAGE_TYPES.${name}`).toHaveProperty(name);
    }
    expect({ ...ours }).toEqual(Object.fromEntries(names.map((name) => [name, upstream[name as keyof typeof upstream]])));
  });

  it("cover every frame type upstream's chat protocol names", () => {
    // A frame type upstream adds shows up here, so whoever updates agents decides whether the client must read it.
    expect(Object.keys(ours).toSorted()).toEqual(Object.keys(upstream).toSorted());
  });
});
