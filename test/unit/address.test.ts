import { afterEach, describe, expect, it, vi } from "vitest";
import { readSubChain, subAgentPath } from "../../src/core/address";

afterEach(() => vi.restoreAllMocks());

describe("subAgentPath", () => {
  it("is the path itself without a chain", () => {
    expect(subAgentPath([], undefined)).toBeUndefined();
    expect(subAgentPath([], "settings")).toBe("settings");
  });

  it("puts sub/<kebab class>/<encoded name> per step, root first, before the path", () => {
    expect(subAgentPath([{ agent: "Inbox", name: "alice" }], undefined)).toBe("sub/inbox/alice");
    expect(
      subAgentPath(
        [
          { agent: "Inbox", name: "alice" },
          { agent: "ChatAgent", name: "chat #1/x" }
        ],
        "/settings"
      )
    ).toBe("sub/inbox/alice/sub/chat-agent/chat%20%231%2Fx/settings");
    expect(subAgentPath([{ agent: "MY_AGENT", name: "n" }], "a/b")).toBe("sub/my-agent/n/a/b");
  });
});

describe("readSubChain", () => {
  it("copies the steps (refs and reactive arrays unwrapped by the caller) and treats null as no chain", () => {
    const steps = [{ agent: "ChatAgent", name: "abc", extra: true }];
    expect(readSubChain(steps)).toEqual([{ agent: "ChatAgent", name: "abc" }]);
    expect(readSubChain(undefined)).toEqual([]);
    expect(readSubChain(null)).toEqual([]);
  });

  it("warns once per problem: a missing name, a class that kebab-cases to the reserved `sub`, not an array", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(readSubChain([{ agent: "ChatAgent", name: "" }])).toEqual([{ agent: "ChatAgent", name: "" }]);
    readSubChain([{ agent: "ChatAgent", name: "" }]);
    expect(readSubChain([{ agent: "Sub", name: "x" }])).toEqual([{ agent: "Sub", name: "x" }]);
    expect(readSubChain({ agent: "ChatAgent", name: "x" } as never)).toEqual([]);
    expect(warn.mock.calls.map(([message]) => message)).toEqual([
      expect.stringMatching(/step 0 needs a non-empty "agent" and "name"/),
      expect.stringMatching(/class "Sub" kebab-cases to "sub", the reserved separator/),
      expect.stringMatching(/expected an array of \{ agent, name \} steps, got object/)
    ]);
  });
});
