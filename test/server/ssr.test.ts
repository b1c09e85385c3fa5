import { describe, expect, it } from "vitest";
import { createSSRApp, defineComponent, h } from "vue";
import { renderToString } from "vue/server-renderer";
import { useAgentChat } from "../../src";

describe("on the server (no window, no WebSocket)", () => {
  it("useAgentChat throws at once, naming <ClientOnly> and onMounted", () => {
    expect(typeof window).toBe("undefined");
    expect(() => useAgentChat({ client: { agent: "ChatAgent", host: "example.com", name: "s1" } })).toThrowError(
      /only in the browser.*<ClientOnly>.*onMounted/s
    );
  });

  it("fails server rendering of a component that calls it, with the same message", async () => {
    const Chat = defineComponent({
      setup() {
        const { chat } = useAgentChat({ client: { agent: "ChatAgent", host: "example.com", name: "s1" } });
        return () => h("div", chat.messages.length);
      }
    });
    await expect(renderToString(createSSRApp(Chat))).rejects.toThrowError(/<ClientOnly>/);
  });
});
