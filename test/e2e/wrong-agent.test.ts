import { describe, expect, it, vi } from "vitest";
import { useAgent, useAgentChat } from "../../src";
import { agentHost, uniqueName } from "../support/e2e";
import { mountComposable } from "../support/mount";

/** The class name in Getting started's first chat (docs/guide/getting-started.md); the fixture worker has no such agent. */
const MISSING = "MyAgent";

describe("an agent name the worker does not know (issue 31, 5)", () => {
  it("connectionError names the agent, its URL and the HTTP status with a hint; the console says it once; a message waits queued", async () => {
    const name = uniqueName("wrong-agent");
    const warn = vi.spyOn(console, "warn");
    const { result: chat, unmount } = mountComposable(() =>
      useAgentChat({ client: { agent: MISSING, host: agentHost(), name, query: { token: "secret-token" } } })
    );
    const sent = chat.chat.sendMessage({ text: "hi" });
    await vi.waitFor(() => expect(chat.connectionError.value?.message).toContain("HTTP 400"), { timeout: 20_000 });
    const message = chat.connectionError.value!.message;
    const url = `http://${agentHost()}/agents/my-agent/${name}`;
    expect(message).toContain(`agent ${MISSING}/${name}`);
    expect(message).toContain(` at ${url}:`);
    expect(message).toContain(": the server answered HTTP 400, not a WebSocket; retrying");
    expect(message).toContain(`exports the class "${MISSING}"`);
    expect(message).toContain("as a Durable Object");
    expect(message).toContain("routeAgentRequest()");
    expect(message).toMatch(/retrying \(attempt \d+\)/);
    expect(message).not.toContain("secret-token");
    expect(message).not.toContain("close code");
    expect(chat.connectionStatus.value).toBe("connecting");

    // Shown as queued, not as sent: it waits in the outbox and no request is in flight.
    expect(chat.queuedMessages.value.map((m) => m.parts)).toEqual([[{ type: "text", text: "hi" }]]);
    expect(chat.status.value).toBe("ready");

    // Once in the console, however many attempts fail afterwards.
    const failedBefore = Number(/attempt (\d+)/.exec(message)![1]);
    await vi.waitFor(() => expect(Number(/attempt (\d+)/.exec(chat.connectionError.value!.message)![1])).toBeGreaterThan(failedBefore), {
      timeout: 20_000
    });
    expect(chat.connectionError.value!.message).toContain("HTTP 400");
    const explained = warn.mock.calls.filter(([text]) => String(text).includes("HTTP 400"));
    expect(explained).toHaveLength(1);
    expect(String(explained[0]![0])).toContain(url);
    unmount();
    await sent;
    warn.mockRestore();
  });

  it("useAgent's connectionError explains the same refusal", async () => {
    const name = uniqueName("wrong-agent-client");
    const { result: agent, unmount } = mountComposable(() => useAgent({ agent: MISSING, host: agentHost(), name }));
    await vi.waitFor(() => expect(agent.connectionError.value?.message).toContain("HTTP 400"), { timeout: 20_000 });
    const message = agent.connectionError.value!.message;
    expect(message).toContain(`agent ${MISSING}/${name} at http://${agentHost()}/agents/my-agent/${name}:`);
    expect(message).toContain("routeAgentRequest()");
    expect(agent.status.value).toBe("connecting");
    unmount();
  });
});
