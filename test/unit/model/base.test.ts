import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS, TranscriptBase } from "../../../src/core/model/base";

describe("TranscriptBase", () => {
  describe("Rule (read admission)", () => {
    it("admits an answer when nothing moved the clock while the read was out", () => {
      const base = new TranscriptBase();
      const read = base.read(false);
      expect(base.admit(read, true)).toBe("admit");
    });

    it("makes a read again when a transcript frame overtook it", () => {
      const base = new TranscriptBase();
      const read = base.read(true);
      base.frameArrived();
      expect(base.admit(read, true)).toBe("retry");
    });

    it(`drops an overtaken read once it was made ${MAX_ATTEMPTS} times`, () => {
      const base = new TranscriptBase();
      const last = base.read(true, MAX_ATTEMPTS);
      base.frameArrived();
      expect(base.admit(last, true)).toBe("drop");
      const earlier = base.read(true, MAX_ATTEMPTS - 1);
      base.frameArrived();
      expect(base.admit(earlier, true)).toBe("retry");
    });

    it("drops a read that left before a local replacement", () => {
      const base = new TranscriptBase();
      const read = base.read(false);
      base.replacedLocally();
      expect(base.admit(read, true)).toBe("drop");
    });

    it("drops a read a newer read superseded, and a read that failed", () => {
      const base = new TranscriptBase();
      const older = base.read(false);
      const newer = base.read(false);
      expect(base.admit(older, true)).toBe("drop");
      expect(base.admit(newer, false)).toBe("drop");
      expect(base.admit(newer, true)).toBe("admit");
      expect(base.newestRead).toBe(newer.id);
    });
  });

  describe("Rule (first load admission)", () => {
    it("admits the first read although frames arrived meanwhile", () => {
      const base = new TranscriptBase();
      const read = base.read(false);
      base.frameArrived();
      base.frameArrived();
      expect(base.admitFirst(read, true)).toBe(true);
    });

    it("yields to a local replacement made while it was out, and to a failed read", () => {
      const base = new TranscriptBase();
      const read = base.read(false);
      expect(base.admitFirst(read, false)).toBe(false);
      base.replacedLocally();
      expect(base.admitFirst(read, true)).toBe(false);
    });
  });

  it("holds the ids of what the server is known to hold", () => {
    const base = new TranscriptBase();
    base.hold([{ id: "a" }, { id: "b" }]);
    expect([...base.known]).toEqual(["a", "b"]);
  });
});
