import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { LocalIntents } from "../../../src/core/model/intents";
import { ObservedTurn } from "../../../src/core/model/observed";
import { ArrayList, assistant, idsOf, textOf, toolCallMessage, user } from "../../support/model-harness";

function observedTurn(messages: UIMessage[]) {
  const list = new ArrayList<UIMessage>(messages);
  const intents = new LocalIntents<UIMessage>();
  return { list, intents, turn: new ObservedTurn<UIMessage>(list, intents, () => "local-id") };
}

function streamText(turn: ObservedTurn<UIMessage>, id: string, messageId: string, text: string) {
  const message = turn.begin(id, false);
  message.apply({ type: "start", messageId });
  message.apply({ type: "text-start", id: "t" });
  message.apply({ type: "text-delta", id: "t", delta: text });
  return message;
}

/** Another tab's tool continuation: frames flagged `continuation`, a `start` without a `messageId`. */
function streamContinuation(turn: ObservedTurn<UIMessage>, text: string) {
  const message = turn.begin("r2", true);
  message.apply({ type: "start" });
  message.apply({ type: "text-start", id: "t" });
  message.apply({ type: "text-delta", id: "t", delta: text });
  return message;
}

describe("ObservedTurn", () => {
  describe("Rule (observed overlay over frames, #2166)", () => {
    it("keeps the parts the stream built over a frame that lags behind it", () => {
      const { turn } = observedTurn([]);
      streamText(turn, "r", "a1", "Hello");
      const next = turn.overFrame([user("u1"), assistant("a1", "He")]);
      expect(idsOf(next)).toEqual(["u1", "a1"]);
      expect(textOf(next[1])).toBe("Hello");
      expect(textOf(turn.overFrame([user("u1")])[1])).toBe("Hello");
    });

    it("yields to a stored copy that diverged from the stream, or has more parts", () => {
      const { turn } = observedTurn([]);
      streamText(turn, "r", "a1", "Hello");
      const diverged = [user("u1"), assistant("a1", "Bye")];
      expect(turn.overFrame(diverged)).toBe(diverged);
      const longer = [assistant("a1", "Hello", "and more")];
      expect(turn.overFrame(longer)).toBe(longer);
    });

    it("passes the frame through before the stream has a part", () => {
      const { turn } = observedTurn([]);
      turn.begin("r", false);
      const frame = [user("u1")];
      expect(turn.overFrame(frame)).toBe(frame);
    });
  });

  describe("Rule (a continuation stored as its own message, issue 33)", () => {
    it("Think: once a frame shows the continuation stored after the tool call's message, it lands there, once", () => {
      const { list, turn } = observedTurn([user("u1"), toolCallMessage("a1", "c1", "output-available")]);
      const message = streamContinuation(turn, "Tool said");
      turn.mergeUnlessDiverged(message);
      // Before the server says where it stored it, the continuation extends the tool call's message.
      expect(idsOf(list.messages)).toEqual(["u1", "a1"]);
      expect(textOf(list.messages[1])).toBe("Tool said");
      // Think's transcript: the tool call's message as it was, the continuation as a new message.
      const next = turn.overFrame([user("u1"), toolCallMessage("a1", "c1", "output-available"), assistant("a2", "Tool")]);
      expect(idsOf(next)).toEqual(["u1", "a1", "a2"]);
      expect(next[1]!.parts).toHaveLength(1);
      expect(textOf(next[1])).toBe("");
      expect(textOf(next[2])).toBe("Tool said");
      list.messages = next;
      // The stream's end merges into the stored message, not back into the tool call's.
      message.apply({ type: "text-delta", id: "t", delta: ": 5" });
      turn.mergeUnlessDiverged(message);
      expect(idsOf(list.messages)).toEqual(["u1", "a1", "a2"]);
      expect(list.messages.map(textOf)).toEqual(["u1", "", "Tool said: 5"]);
    });

    it("AIChatAgent: a continuation stored in the message it extends stays there", () => {
      const { list, turn } = observedTurn([user("u1"), toolCallMessage("a1", "c1", "output-available")]);
      const message = streamContinuation(turn, "Tool said");
      turn.mergeUnlessDiverged(message);
      const stored: UIMessage = { ...toolCallMessage("a1", "c1", "output-available") };
      stored.parts = [...stored.parts, { type: "text", text: "Tool" }];
      const next = turn.overFrame([user("u1"), stored]);
      expect(idsOf(next)).toEqual(["u1", "a1"]);
      expect(next[1]!.parts).toHaveLength(2);
      expect(textOf(next[1])).toBe("Tool said");
      list.messages = next;
      turn.mergeUnlessDiverged(message);
      expect(idsOf(list.messages)).toEqual(["u1", "a1"]);
      expect(textOf(list.messages[1])).toBe("Tool said");
    });

    it("an assistant message after the extended one whose text the continuation's does not match is left alone", () => {
      const { turn } = observedTurn([user("u1"), toolCallMessage("a1", "c1", "output-available")]);
      turn.mergeUnlessDiverged(streamContinuation(turn, "Tool said"));
      const next = turn.overFrame([user("u1"), toolCallMessage("a1", "c1", "output-available"), assistant("a2", "Other")]);
      expect(textOf(next[1])).toBe("Tool said");
      expect(textOf(next[2])).toBe("Other");
    });
  });

  describe("Rule (observed merge)", () => {
    it("replaces its copy on screen, or appends it", () => {
      const { list, turn } = observedTurn([user("u1")]);
      const message = streamText(turn, "r", "a1", "Hi");
      turn.mergeUnlessDiverged(message);
      expect(idsOf(list.messages)).toEqual(["u1", "a1"]);
      message.apply({ type: "text-delta", id: "t", delta: " there" });
      turn.mergeUnlessDiverged(message);
      expect(list.messages).toHaveLength(2);
      expect(textOf(list.messages[1])).toBe("Hi there");
    });

    it("leaves another writer's diverged copy alone, but not its own last merge", () => {
      const { list, turn } = observedTurn([user("u1"), assistant("a1", "Other")]);
      const message = streamText(turn, "r", "a1", "Hi");
      turn.mergeUnlessDiverged(message);
      expect(textOf(list.messages[1])).toBe("Other");
      // A replay rebuilds the message from chunk 0: shorter than its own last merge, yet it replaces it.
      const own = observedTurn([user("u1")]);
      own.turn.mergeUnlessDiverged(streamText(own.turn, "r", "a1", "Hello"));
      const rebuilt = streamText(own.turn, "r", "a1", "He");
      own.turn.mergeUnlessDiverged(rebuilt);
      expect(textOf(own.list.messages[1])).toBe("He");
    });

    it("leaves another writer's copy that holds more parts than the stream built (chunks withheld from this socket)", () => {
      const stored: UIMessage = { ...assistant("a1", "Hi"), parts: [...assistant("a1", "Hi").parts, ...toolCallMessage("x", "c1").parts] };
      const { list, turn } = observedTurn([user("u1"), stored]);
      turn.mergeUnlessDiverged(streamText(turn, "r", "a1", "Hi"));
      expect(list.messages[1]).toBe(stored);
    });

    it("does not merge a message a rewrite of this client's removed", () => {
      const { list, intents, turn } = observedTurn([user("u1")]);
      intents.beginRewrite([user("u1"), assistant("a1")], undefined, 0);
      const message = streamText(turn, "r", "a1", "Hi");
      turn.mergeUnlessDiverged(message);
      expect(idsOf(list.messages)).toEqual(["u1"]);
      expect(idsOf(turn.mergedInto(message, [user("u1")]))).toEqual(["u1"]);
    });
  });

  it("is active from begin to end", () => {
    const { turn } = observedTurn([]);
    turn.begin("r", false);
    expect([turn.active, turn.streamId]).toEqual([true, "r"]);
    turn.end();
    expect([turn.active, turn.streamId]).toEqual([false, null]);
  });
});
