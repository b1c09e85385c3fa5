import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { acceptPartialRequests, rebuild, rebuildRequestFrame, withPartialRequests } from "../../src/server";

const msg = (id: string, role: UIMessage["role"] = "user", text = id): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text }]
});
const ids = (messages: readonly UIMessage[]) => messages.map((message) => message.id);
const stored = [msg("u1"), msg("a1", "assistant"), msg("u2"), msg("a2", "assistant")];

describe("rebuild (the server half of sendOnlyNewMessages)", () => {
  it("returns the list as sent when there is no afterMessageId (a full request)", () => {
    const sent = [msg("u1"), msg("x")];
    expect(rebuild(stored, sent)).toEqual(sent);
  });

  it("appends new messages after the whole stored transcript", () => {
    expect(ids(rebuild(stored, [msg("u3")], "a2"))).toEqual(["u1", "a1", "u2", "a2", "u3"]);
  });

  it("rewrites in place when the first message sent is already stored (an edit)", () => {
    const edited = msg("u2", "user", "edited");
    const result = rebuild(stored, [edited], "a1");
    expect(ids(result)).toEqual(["u1", "a1", "u2"]);
    expect(result[2]).toBe(edited);
  });

  it("rewrites an assistant message resubmitted after a tool output, dropping what followed it", () => {
    const resubmitted = msg("a1", "assistant", "with tool output");
    expect(ids(rebuild(stored, [resubmitted], "u1"))).toEqual(["u1", "a1"]);
  });

  it("does not erase messages another client added that this client never saw", () => {
    // The client last saw a1; meanwhile u2/a2 were stored by another tab.
    expect(ids(rebuild(stored, [msg("u9")], "a1"))).toEqual(["u1", "a1", "u2", "a2", "u9"]);
  });

  it("treats afterMessageId only as a hint, even when it names a message never stored", () => {
    expect(ids(rebuild(stored, [msg("u3")], "reply-the-server-never-stored"))).toEqual([
      "u1",
      "a1",
      "u2",
      "a2",
      "u3"
    ]);
  });

  it("skips sent messages the server already holds when they are not first", () => {
    expect(ids(rebuild(stored, [msg("u3"), msg("u2")], "a2"))).toEqual(["u1", "a1", "u2", "a2", "u3"]);
  });

  it("returns the stored transcript for an empty partial request", () => {
    expect(ids(rebuild(stored, [], "a2"))).toEqual(ids(stored));
  });

  it("starts from nothing when nothing is stored", () => {
    expect(ids(rebuild([], [msg("u1")], "gone"))).toEqual(["u1"]);
  });
});

const requestFrame = (body: Record<string, unknown>) =>
  JSON.stringify({ type: "cf_agent_use_chat_request", id: "r1", init: { method: "POST", body: JSON.stringify(body) } });

describe("rebuildRequestFrame", () => {
  it("replaces a partial request's messages with the full list and drops afterMessageId", () => {
    const frame = rebuildRequestFrame(
      requestFrame({ messages: [msg("u3")], afterMessageId: "a2", trigger: "submit-message", extra: 1 }),
      stored
    ) as string;
    const parsed = JSON.parse(frame);
    expect(parsed.id).toBe("r1");
    const body = JSON.parse(parsed.init.body);
    expect(ids(body.messages)).toEqual(["u1", "a1", "u2", "a2", "u3"]);
    expect(body).not.toHaveProperty("afterMessageId");
    expect(body.extra).toBe(1);
    expect(body.trigger).toBe("submit-message");
  });

  it("leaves full requests, other frames and garbage untouched", () => {
    const full = requestFrame({ messages: [msg("u1")], trigger: "submit-message" });
    expect(rebuildRequestFrame(full, stored)).toBe(full);
    expect(rebuildRequestFrame('{"type":"cf_agent_chat_clear"}', stored)).toBe('{"type":"cf_agent_chat_clear"}');
    expect(rebuildRequestFrame("cf_agent_use_chat_request but not json", stored)).toBe(
      "cf_agent_use_chat_request but not json"
    );
    const binary = new ArrayBuffer(4);
    expect(rebuildRequestFrame(binary, stored)).toBe(binary);
  });
});

describe("acceptPartialRequests / withPartialRequests", () => {
  it("wraps onMessage so the agent's handler sees the rebuilt request", () => {
    const seen: unknown[] = [];
    const agent = {
      messages: stored,
      onMessage(_connection: never, message: never) {
        seen.push(message);
      }
    };
    acceptPartialRequests(agent);
    agent.onMessage({} as never, requestFrame({ messages: [msg("u3")], afterMessageId: "a2" }) as never);
    const body = JSON.parse(JSON.parse(seen[0] as string).init.body);
    expect(ids(body.messages)).toHaveLength(5);
  });

  it("installs the rewrite from the constructor of a mixed-in class", () => {
    const seen: unknown[] = [];
    class Base {
      messages = stored;
      onMessage(_connection: never, message: never) {
        seen.push(message);
      }
    }
    const Mixed = withPartialRequests(Base);
    const agent = new Mixed();
    agent.onMessage({} as never, requestFrame({ messages: [msg("u3")], afterMessageId: "a2" }) as never);
    expect(ids(JSON.parse(JSON.parse(seen[0] as string).init.body).messages)).toHaveLength(5);
  });
});
