import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type AITool,
  errorText,
  extractClientToolSchemas,
  getToolApproval,
  getToolCallId,
  getToolInput,
  getToolOutput,
  getToolPartState,
  hasPendingClientToolCalls,
  pendingToolParts,
  toolsWithoutExecute
} from "../../src/core/tools";

type Part = UIMessage["parts"][number];

const part = (state: string, extra: Record<string, unknown> = {}) =>
  ({ type: "tool-lookup", toolCallId: "c1", state, input: { q: 1 }, ...extra }) as unknown as Part;
const user = (id: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: id }] });
const assistant = (id: string, ...parts: Part[]): UIMessage => ({ id, role: "assistant", parts });
const call = (name: string, toolCallId: string, state = "input-available") =>
  ({ type: `tool-${name}`, toolCallId, state, input: {} }) as unknown as Part;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("getToolPartState", () => {
  it.each([
    ["input-streaming", "streaming"],
    ["input-available", "loading"],
    ["approval-requested", "waiting-approval"],
    ["approval-responded", "approved"],
    ["output-available", "complete"],
    ["output-error", "error"],
    ["output-denied", "denied"],
    ["something-new", "loading"]
  ])("maps %s to %s (upstream's mapping)", (state, expected) => {
    expect(getToolPartState(part(state))).toBe(expected);
  });

  it("maps a part without a state (a text part) to loading", () => {
    expect(getToolPartState({ type: "text", text: "hi" })).toBe("loading");
  });
});

describe("tool part accessors", () => {
  it("read the call id, input, output and approval of a part", () => {
    const answered = part("output-available", { output: { ok: true }, approval: { id: "ap1", approved: true } });
    expect(getToolCallId(answered)).toBe("c1");
    expect(getToolInput(answered)).toEqual({ q: 1 });
    expect(getToolOutput(answered)).toEqual({ ok: true });
    expect(getToolApproval(answered)).toEqual({ id: "ap1", approved: true });
  });

  it("return undefined for what a part does not have", () => {
    const waiting = part("input-streaming", { input: undefined });
    expect(getToolInput(waiting)).toBeUndefined();
    expect(getToolOutput(waiting)).toBeUndefined();
    expect(getToolApproval(waiting)).toBeUndefined();
  });
});

describe("extractClientToolSchemas", () => {
  it("is undefined without tools, or when no tool has execute (the key is then omitted)", () => {
    expect(extractClientToolSchemas()).toBeUndefined();
    expect(extractClientToolSchemas({})).toBeUndefined();
    expect(extractClientToolSchemas({ confirm: { description: "waits for a person" } })).toBeUndefined();
  });

  it("lists the tools with execute as { name, description, parameters }", () => {
    const tools: Record<string, AITool> = {
      weather: {
        description: "Get the weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        execute: () => ({ temp: 70 })
      },
      confirm: { description: "no execute" },
      ping: { execute: () => "pong" }
    };
    expect(extractClientToolSchemas(tools)).toEqual([
      {
        name: "weather",
        description: "Get the weather",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      },
      { name: "ping", description: undefined, parameters: undefined }
    ]);
  });

  it("falls back to the deprecated inputSchema, warning once per tool", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const legacy: Record<string, AITool> = { legacyTool: { inputSchema: { type: "object" }, execute: () => 1 } };
    expect(extractClientToolSchemas(legacy)).toEqual([{ name: "legacyTool", description: undefined, parameters: { type: "object" } }]);
    extractClientToolSchemas(legacy);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain("legacyTool");
  });

  it("prefers parameters over inputSchema, without a warning", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const both: Record<string, AITool> = {
      both: { parameters: { type: "object", title: "new" }, inputSchema: { type: "object", title: "old" }, execute: () => 1 }
    };
    expect(extractClientToolSchemas(both)?.[0]?.parameters).toEqual({ type: "object", title: "new" });
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("toolsWithoutExecute (the legacy confirmation list)", () => {
  it("names the tools that have no execute", () => {
    expect(toolsWithoutExecute()).toEqual([]);
    expect(toolsWithoutExecute({ a: { execute: () => 1 }, b: {}, c: { description: "c" } })).toEqual(["b", "c"]);
  });
});

describe("pendingToolParts", () => {
  it("returns the input-available tool parts of the last message when it is an assistant", () => {
    const messages = [
      user("u1"),
      assistant("a1", { type: "text", text: "hi" }, call("x", "c1"), call("y", "c2", "output-available"), call("z", "c3"))
    ];
    expect(pendingToolParts(messages).map((p) => p.toolCallId)).toEqual(["c1", "c3"]);
  });

  it("ignores earlier messages and a trailing user message", () => {
    expect(pendingToolParts([assistant("a1", call("x", "c1")), user("u2")])).toEqual([]);
    expect(pendingToolParts([assistant("a1", call("x", "c1")), assistant("a2")])).toEqual([]);
    expect(pendingToolParts([])).toEqual([]);
  });
});

describe("hasPendingClientToolCalls (isServerStreaming's client half, rules 85-86)", () => {
  const waiting = [user("u1"), assistant("a1", call("lookup", "c1"))];

  it("is false quickly with nothing running and no tools", () => {
    expect(hasPendingClientToolCalls(waiting, new Set(), undefined, [])).toBe(false);
  });

  it("is true while an onToolCall for a waiting part runs", () => {
    expect(hasPendingClientToolCalls(waiting, new Set(["c1"]), undefined, [])).toBe(true);
    expect(hasPendingClientToolCalls(waiting, new Set(["other"]), undefined, [])).toBe(false);
  });

  it("is true while a waiting part's tool has execute", () => {
    expect(hasPendingClientToolCalls(waiting, new Set(), { lookup: { execute: () => 1 } }, [])).toBe(true);
    expect(hasPendingClientToolCalls(waiting, new Set(), { lookup: {} }, [])).toBe(false);
  });

  it("does not count a tool that waits for a person", () => {
    expect(hasPendingClientToolCalls(waiting, new Set(["c1"]), { lookup: { execute: () => 1 } }, ["lookup"])).toBe(false);
  });

  it("is false once the part is answered, or when the last message is not an assistant", () => {
    const answered = [user("u1"), assistant("a1", call("lookup", "c1", "output-available"))];
    expect(hasPendingClientToolCalls(answered, new Set(["c1"]), { lookup: { execute: () => 1 } }, [])).toBe(false);
    expect(hasPendingClientToolCalls([...waiting, user("u2")], new Set(["c1"]), undefined, [])).toBe(false);
  });
});

describe("errorText (what a throwing execute reports)", () => {
  it("uses an Error's message, or its name when the message is empty", () => {
    expect(errorText(new Error("GPS unavailable"))).toBe("GPS unavailable");
    expect(errorText(new TypeError(""))).toBe("TypeError");
  });

  it("keeps a thrown string and serializes anything else", () => {
    expect(errorText("plain")).toBe("plain");
    expect(errorText({ code: 7 })).toBe('{"code":7}');
    expect(errorText(undefined)).toBe("undefined");
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(errorText(circular)).toBe("[object Object]");
  });
});
