/**
 * MCP state on useAgent: `McpHostAgent` keeps MCP server entries and sends
 * `cf_agent_mcp_servers` on connect and on every change. Its server entry
 * points at the fixture worker's own `/mcp` (a minimal MCP server with one
 * tool), so the agent's MCP client really connects and lists it.
 */
import type { MCPServersState } from "agents";
import { describe, expect, it, vi } from "vitest";
import { nextTick, ref } from "vue";
import { useAgent } from "../../src";
import { FIXTURE_MCP_TOOL } from "../fixtures/worker/src/mcp-server";
import { agentHost, agentOrigin, uniqueName, waitForLog } from "../support/e2e";
import { mountComposable } from "../support/mount";

const MCP_HOST = "McpHostAgent";
const EMPTY: MCPServersState = { servers: {}, tools: [], prompts: [], resources: [] };

interface McpHost {
  addServer(name: string, url: string): Promise<{ id: string; state: string }>;
  removeServer(id: string): Promise<void>;
}

function openHost(name: Parameters<typeof useAgent>[0]["name"], extra: Partial<Parameters<typeof useAgent>[0]> = {}) {
  return mountComposable(() => useAgent<McpHost, unknown>({ agent: MCP_HOST, name, host: agentHost(), ...extra }));
}

describe("useAgent: MCP state", () => {
  it("mcpServers follows the agent's MCP servers: empty on connect, the entry with its tools once added, gone once removed", async () => {
    const name = uniqueName("mcp");
    const updates: MCPServersState[] = [];
    const frames: string[] = [];
    const { result: host, unmount } = openHost(name, {
      onMcpUpdate: (state) => updates.push(state),
      onMessage: (event) => frames.push(String(event.data))
    });
    expect(host.mcpServers.value).toBeUndefined();
    await host.ready;
    await vi.waitFor(() => expect(host.mcpServers.value).toEqual(EMPTY));

    const added = await host.stub.addServer("fixture", `${agentOrigin()}/mcp`);
    expect(added.state).toBe("ready");
    await vi.waitFor(() => expect(host.mcpServers.value?.servers[added.id]?.state).toBe("ready"));
    expect(host.mcpServers.value?.servers[added.id]).toMatchObject({
      name: "fixture",
      server_url: `${agentOrigin()}/mcp`,
      instructions: "A fixture MCP server.",
      error: null
    });
    expect(host.mcpServers.value?.tools).toEqual([{ ...FIXTURE_MCP_TOOL, serverId: added.id }]);
    expect(updates.at(-1)).toBe(host.mcpServers.value);
    // The connect-time state, then at least one change.
    expect(updates[0]).toEqual(EMPTY);
    expect(updates.length).toBeGreaterThan(1);

    await host.stub.removeServer(added.id);
    await waitForLog(name, (entry) => entry.kind === "mcp-removed", { agent: MCP_HOST });
    await vi.waitFor(() => expect(host.mcpServers.value).toEqual(EMPTY));
    // The MCP frames are the composable's own: onMessage never saw one.
    expect(frames.filter((frame) => frame.includes("cf_agent_mcp_servers"))).toEqual([]);
    unmount();
  });

  it("a client that connects later gets the entry on connect; an address change clears it until the new agent sends its own", async () => {
    const withServer = uniqueName("mcp-full");
    const setup = openHost(withServer);
    await setup.result.ready;
    const { id } = await setup.result.stub.addServer("fixture", `${agentOrigin()}/mcp`);
    setup.unmount();

    const name = ref(withServer);
    const { result: host, unmount } = openHost(name);
    await vi.waitFor(() => expect(host.mcpServers.value?.servers[id]?.state).toBe("ready"));
    expect(host.mcpServers.value?.tools.map((tool) => tool.name)).toEqual([FIXTURE_MCP_TOOL.name]);

    name.value = uniqueName("mcp-empty");
    await nextTick();
    expect(host.mcpServers.value).toBeUndefined();
    await vi.waitFor(() => expect(host.mcpServers.value).toEqual(EMPTY));

    // A reconnect to the same address keeps what is shown until the server resends it.
    const before = host.mcpServers.value;
    host.reconnect();
    expect(host.mcpServers.value).toBe(before);
    await vi.waitFor(() => expect(host.status.value).toBe("open"));
    unmount();
  });
});
