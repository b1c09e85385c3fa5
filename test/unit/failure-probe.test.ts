import { afterEach, describe, expect, it, vi } from "vitest";
import { type AgentSocket, FailureProbe, MAX_PROBES, PROBE_AFTER_FAILURES, connectionFailure } from "../../src/core/connection";

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

/** A socket that says where it points, as AgentClient does. */
function socketAt(url: string): AgentSocket {
  return { _pkurl: url, send: () => {}, addEventListener: () => {}, removeEventListener: () => {} } as unknown as AgentSocket;
}

/** Stands in for the network: answers every request with `status`, counting them. */
function stubFetch(status: number | "offline") {
  const calls: string[] = [];
  vi.stubGlobal("fetch", (url: string) => {
    calls.push(url);
    return status === "offline" ? Promise.reject(new TypeError("Failed to fetch")) : Promise.resolve(new Response("Invalid request", { status }));
  });
  return calls;
}

/** Runs one failed attempt through the probe and waits for anything it reports. */
async function fail(probe: FailureProbe, attempt: number): Promise<Error | undefined> {
  let reported: Error | undefined;
  probe.afterFailure(attempt, () => false, (error) => (reported = error));
  await new Promise((resolve) => setTimeout(resolve, 0));
  return reported;
}

/** The failure text after a probe got `status`. */
const message = (status: number | null) => connectionFailure("MyAgent/x", 3, { url: "u", answer: { status } }).message;

describe("connectionFailure", () => {
  it("names agent, address and attempt in words, without a close code", () => {
    const error = connectionFailure("ChatAgent/main", 2, { url: "https://example.com/agents/chat-agent/main" });
    expect(error.message).toBe("Could not connect to agent ChatAgent/main at https://example.com/agents/chat-agent/main; retrying (attempt 2).");
    expect(error.name).toBe("AgentConnectionError");
  });

  it("gives a hint per kind of answer", () => {
    expect(message(400)).toContain('exports the class "MyAgent"');
    expect(message(400)).toContain('URL segment "my-agent"');
    expect(message(404)).toContain("routeAgentRequest()");
    expect(message(401)).toContain("`query`");
    expect(message(500)).toContain("the worker's logs");
    expect(message(502)).toContain("could not reach the worker");
    expect(message(302)).toContain("not a WebSocket");
    expect(message(null)).toContain("no answer from the server; retrying (attempt 3). Is it running");
  });
});

describe("FailureProbe (Rule: a refused socket is explained)", () => {
  it("probes the socket's own address (query included) only after repeated failures, once per run, and warns once", async () => {
    const calls = stubFetch(400);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const socket = socketAt("ws://host.test/agents/my-agent/x?token=t");
    const probe = new FailureProbe(socket, "MyAgent/x");
    for (let attempt = 1; attempt < PROBE_AFTER_FAILURES; attempt++) expect(await fail(probe, attempt)).toBeUndefined();
    expect(calls).toEqual([]);
    const explained = await fail(probe, PROBE_AFTER_FAILURES);
    expect(calls).toEqual(["http://host.test/agents/my-agent/x?token=t"]);
    expect(explained?.message).toContain("at http://host.test/agents/my-agent/x: the server answered HTTP 400, not a WebSocket");
    expect(explained?.message).not.toContain("token");
    // Later failures of the same run reuse the answer: no new request, no new warning.
    expect(probe.failure(PROBE_AFTER_FAILURES + 1).message).toContain("HTTP 400");
    await fail(probe, PROBE_AFTER_FAILURES + 1);
    expect(calls).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("a socket that opened probes afresh on its next run of failures, at most MAX_PROBES times in all", async () => {
    const calls = stubFetch("offline");
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const probe = new FailureProbe(socketAt("wss://host.test/agents/chat-agent/x"), "ChatAgent/x");
    for (let run = 0; run < MAX_PROBES + 2; run++) {
      await fail(probe, PROBE_AFTER_FAILURES);
      probe.opened();
    }
    expect(calls).toHaveLength(MAX_PROBES);
    expect(calls[0]).toBe("https://host.test/agents/chat-agent/x");
  });

  it("a stale attempt (the socket opened meanwhile) reports nothing", async () => {
    stubFetch(400);
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const probe = new FailureProbe(socketAt("ws://host.test/agents/my-agent/x"), "MyAgent/x");
    const report = vi.fn();
    probe.afterFailure(PROBE_AFTER_FAILURES, () => true, report);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(report).not.toHaveBeenCalled();
  });

  it("a socket that does not say where it points is never probed", async () => {
    const calls = stubFetch(400);
    const probe = new FailureProbe({ send: () => {}, addEventListener: () => {}, removeEventListener: () => {} }, "A/b");
    expect(await fail(probe, 5)).toBeUndefined();
    expect(calls).toEqual([]);
    expect(probe.failure(5).message).toBe("Could not connect to agent A/b; retrying (attempt 5).");
  });
});
