import { describe, expect, it } from "vitest";
import { createSSRApp, defineComponent, h } from "vue";
import { renderToString } from "vue/server-renderer";
import { useAgent } from "../../src";

describe("useAgent on the server (no window, no WebSocket)", () => {
  it("throws at once, naming <ClientOnly> and onMounted", () => {
    expect(typeof window).toBe("undefined");
    expect(() => useAgent({ agent: "StatefulAgent", host: "example.com", name: "s1" })).toThrowError(
      /useAgent\(\) opens a WebSocket.*only in the browser.*<ClientOnly>.*onMounted/s
    );
  });

  it("fails server rendering of a component that calls it, with the same message", async () => {
    const Counter = defineComponent({
      setup() {
        const { state } = useAgent<{ count: number }>({ agent: "StatefulAgent", host: "example.com" });
        return () => h("div", state.value?.count ?? 0);
      }
    });
    await expect(renderToString(createSSRApp(Counter))).rejects.toThrowError(/useAgent\(\).*<ClientOnly>/s);
  });
});
