import { describe, expect, it, vi } from "vitest";
import { useAgentChat } from "../../src";
import { FakeSocket, textReply } from "../support/fake-socket";
import { mountComposable } from "../support/mount";

function setup(options: Parameters<typeof useAgentChat>[0] = {}) {
  const socket = new FakeSocket();
  const mounted = mountComposable(() => useAgentChat({ agent: socket, initialMessages: [], ...options }));
  return { socket, ...mounted, chat: mounted.result };
}

const lastRequest = (socket: FakeSocket) => {
  const requests = socket.sentOf("cf_agent_use_chat_request");
  const request = requests[requests.length - 1] as { id: string; init: { body: string } };
  return { id: request.id, body: JSON.parse(request.init.body) };
};

describe("a send over the socket", () => {
  it("streams a reply into chat.messages and settles at ready", async () => {
    const { socket, chat, unmount } = setup({ resume: false });
    socket.open();
    const sent = chat.sendMessage({ text: "hi" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const { id, body } = lastRequest(socket);
    expect(id).toHaveLength(8);
    expect(body.trigger).toBe("submit-message");
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user"]);

    for (const chunk of textReply("a1", ["Hel", "lo"])) socket.chunk(id, chunk);
    await vi.waitFor(() => expect(chat.status.value).toBe("streaming"));
    socket.done(id);
    await sent;
    expect(chat.status.value).toBe("ready");
    expect(chat.chat.messages.map((m) => [m.role, m.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text).join("")])).toEqual([
      ["user", "hi"],
      ["assistant", "Hello"]
    ]);
    unmount();
  });

  it("survives a non-JSON frame and keeps working", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { socket, chat, unmount } = setup({ resume: false });
    socket.open();
    socket.push("this is not json");
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("not JSON"));
    const sent = chat.sendMessage({ text: "again" });
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    const { id } = lastRequest(socket);
    for (const chunk of textReply("a2", ["ok"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(chat.messages.value).toHaveLength(2);
    warn.mockRestore();
    unmount();
  });

  it("queues a send while the socket is down and delivers it when it opens", async () => {
    const { socket, chat, unmount } = setup({ resume: false });
    const sent = chat.sendMessage({ text: "offline" });
    await vi.waitFor(() => expect(chat.messages.value).toHaveLength(1));
    expect(chat.queuedMessages.value).toHaveLength(1);
    expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(0);
    socket.open();
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_use_chat_request")).toHaveLength(1));
    expect(chat.queuedMessages.value).toHaveLength(0);
    const { id, body } = lastRequest(socket);
    expect(body.messages[0].id).toBe(chat.messages.value[0]!.id);
    for (const chunk of textReply("a3", ["answered"])) socket.chunk(id, chunk);
    socket.done(id);
    await sent;
    expect(chat.messages.value.map((m) => m.role)).toEqual(["user", "assistant"]);
    unmount();
  });

  it("probes for a running stream once the socket opens, never before", async () => {
    const { socket, unmount } = setup();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(socket.sent).toHaveLength(0);
    socket.open();
    await vi.waitFor(() => expect(socket.sentOf("cf_agent_stream_resume_request")).toHaveLength(1));
    expect(String(socket.sentOf("cf_agent_stream_resume_request")[0]!.probeId)).toHaveLength(8);
    unmount();
  });
});
