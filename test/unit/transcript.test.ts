import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import {
  collapseReplayedText,
  mergeStoredWins,
  moveToEnd,
  prependMissing,
  trimForServer,
} from "../../src/core/transcript";
import { requestBody } from "../../src/core/requests";

const msg = (id: string, role: UIMessage["role"] = "user", text = id): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text }]
});
const ids = (messages: UIMessage[]) => messages.map((message) => message.id);

describe("mergeStoredWins (the default mergeMessages)", () => {
  it("takes the stored copy of a message both sides have", () => {
    const merged = mergeStoredWins([msg("a", "user", "old")], [msg("a", "user", "new")]);
    expect(merged).toEqual([msg("a", "user", "new")]);
  });

  it("keeps messages only on screen after the stored ones, in order", () => {
    const merged = mergeStoredWins([msg("a"), msg("x"), msg("b"), msg("y")], [msg("a"), msg("b")]);
    expect(ids(merged)).toEqual(["a", "b", "x", "y"]);
  });
});

describe("prependMissing (a transcript that lands after messages are on screen)", () => {
  it("returns the transcript when nothing is on screen", () => {
    expect(ids(prependMissing([msg("a"), msg("b")], []))).toEqual(["a", "b"]);
  });

  it("puts history first and keeps the on-screen copies (#75)", () => {
    const onScreen = [msg("b", "user", "local"), msg("c")];
    const merged = prependMissing([msg("a"), msg("b", "user", "stored")], onScreen);
    expect(ids(merged)).toEqual(["a", "b", "c"]);
    expect(merged[1]).toBe(onScreen[0]);
  });
});

describe("moveToEnd", () => {
  it("moves a message to the tail and returns the same array when already there", () => {
    const list = [msg("a"), msg("b"), msg("c")];
    expect(ids(moveToEnd(list, "a"))).toEqual(["b", "c", "a"]);
    expect(moveToEnd(list, "c")).toBe(list);
    expect(moveToEnd(list, "zz")).toBe(list);
  });
});

describe("collapseReplayedText (#1733)", () => {
  it("drops a text part that a later part repeats from the start", () => {
    const message: UIMessage = {
      id: "m",
      role: "assistant",
      parts: [
        { type: "text", text: "Hello wor" },
        { type: "text", text: "Hello world" }
      ]
    };
    expect(collapseReplayedText(message).parts).toEqual([{ type: "text", text: "Hello world" }]);
  });

  it("returns the same message when nothing repeats", () => {
    const message = msg("m", "assistant", "one");
    expect(collapseReplayedText(message)).toBe(message);
  });
});

describe("trimForServer (sendOnlyNewMessages, client half)", () => {
  const list = [msg("u1"), msg("a1", "assistant"), msg("u2")];

  it("sends what follows the last message the server holds", () => {
    expect(trimForServer(list, new Set(["u1", "a1"]))).toEqual({ messages: [list[2]], afterMessageId: "a1" });
  });

  it("sends everything, without afterMessageId, when the server holds nothing known", () => {
    expect(trimForServer(list, new Set())).toEqual({ messages: list });
  });

  it("starts at a message rewritten in place (an edit or a resubmitted assistant)", () => {
    expect(trimForServer(list, new Set(["u1", "a1", "u2"]), "a1")).toEqual({
      messages: [list[1], list[2]],
      afterMessageId: "u1"
    });
  });

  it("sends the full list when the rewritten message is the first one", () => {
    expect(trimForServer(list, new Set(["u1"]), "u1")).toEqual({ messages: list });
  });

  it("does not count a message only this client has as an anchor", () => {
    const withLocal = [msg("u1"), msg("local", "assistant"), msg("u2")];
    expect(trimForServer(withLocal, new Set(["u1"]))).toEqual({
      messages: [withLocal[1], withLocal[2]],
      afterMessageId: "u1"
    });
  });
});

describe("requestBody's messages (Rule: a shell sent is stored)", () => {
  const shell: UIMessage = { id: "a2", role: "assistant", parts: [] };

  it("leaves the list as the AI SDK built it, an empty reply shell too, unless prepareSendMessagesRequest set the messages", async () => {
    const settings = { mergeMessages: mergeStoredWins } as unknown as Parameters<typeof requestBody>[0];
    const request = { messages: [msg("u1"), shell, msg("u2")], trigger: "submit-message" as const };
    expect(await requestBody(settings, request, "chat", new Set())).not.toHaveProperty("messages");
    const own = { ...settings, prepareSendMessagesRequest: () => ({ body: { messages: ["theirs"] } }) } as typeof settings;
    expect((await requestBody(own, request, "chat", new Set())).messages).toEqual(["theirs"]);
  });
});
