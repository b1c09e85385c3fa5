import { describe, expect, it } from "vitest";
import { ToolBook } from "../../../src/core/model/tools";
import { toolCallMessage, user } from "../../support/model-harness";

const execute = () => "ran";

describe("ToolBook", () => {
  describe("Rule (a watching tab never answers)", () => {
    it("leaves a call streamed in another client's turn to that client", () => {
      const book = new ToolBook();
      book.noteOthers({ type: "tool-input-start", toolCallId: "c1", toolName: "ask" });
      book.noteOthers({ type: "text-delta", toolCallId: "c2" });
      const messages = [toolCallMessage("a1", "c1"), toolCallMessage("a2", "c2")];
      const runs = book.runnable(messages, { ask: { execute } }, true, false);
      expect(runs.map((run) => run.part.toolCallId)).toEqual(["c2"]);
      expect(book.automatic(messages, { ask: { execute } }, [])).toHaveLength(0);
    });
  });

  describe("Rule (client tools run after the stream, #2195)", () => {
    it("returns each waiting call once: with execute, or through onToolCall", () => {
      const book = new ToolBook();
      const messages = [toolCallMessage("a1", "c1")];
      expect(book.runnable(messages, { ask: { execute } }, true, false)).toMatchObject([{ kind: "execute", toolName: "ask" }]);
      expect(book.runnable(messages, { ask: { execute } }, true, false)).toEqual([]);
      const callback = new ToolBook();
      expect(callback.runnable(messages, undefined, true, false)).toMatchObject([{ kind: "callback" }]);
      expect(new ToolBook().runnable(messages, undefined, false, false)).toEqual([]);
    });

    it("leaves calls with execute to the deprecated automatic path, and skips answered calls", () => {
      const book = new ToolBook();
      const messages = [toolCallMessage("a1", "c1")];
      expect(book.runnable(messages, { ask: { execute } }, true, true)).toEqual([]);
      expect(book.automatic(messages, { ask: { execute } }, [])).toHaveLength(1);
      expect(book.automatic(messages, { ask: { execute } }, ["ask"])).toHaveLength(0);
      book.results.set("c1", 1);
      expect(book.runnable(messages, { ask: { execute } }, true, false)).toEqual([]);
      expect(book.runnable([toolCallMessage("a1", "c9", "output-available")], undefined, true, false)).toEqual([]);
    });
  });

  describe("Rule (answered calls show answered, #728)", () => {
    it("overlays the output this client gave on a call still waiting", () => {
      const book = new ToolBook();
      const waiting = toolCallMessage("a1", "c1");
      expect(book.withResults(waiting)).toBe(waiting);
      book.results.set("c1", { ok: true });
      expect(book.withResults(waiting).parts[0]).toMatchObject({ state: "output-available", output: { ok: true } });
      const done = toolCallMessage("a1", "c1", "output-error");
      expect(book.withResults(done)).toBe(done);
    });
  });

  it("forgets outputs of calls no message holds any more, but not which calls ran (a later frame may bring one back)", () => {
    const book = new ToolBook();
    book.results.set("gone", 1);
    book.results.set("c1", 2);
    book.processed.add("gone");
    book.prune([user("u"), toolCallMessage("a1", "c1")]);
    expect([...book.results.keys()]).toEqual(["c1"]);
    expect(book.processed.has("gone")).toBe(true);
  });
});
