import { describe, expect, it } from "vitest";
import { createSSRApp, defineComponent, h } from "vue";
import { renderToString } from "vue/server-renderer";
import { useAgentToolEvents } from "../../src";
import { useVoiceAgent, useVoiceInput } from "../../src/voice";

describe("voice composables on the server (no window, no WebSocket)", () => {
  it("useVoiceAgent and useVoiceInput throw at once, naming <ClientOnly> and onMounted", () => {
    expect(typeof window).toBe("undefined");
    expect(() => useVoiceAgent({ agent: "VoiceAgent", host: "example.com" })).toThrowError(
      /useVoiceAgent\(\) opens a WebSocket.*only in the browser.*<ClientOnly>.*onMounted/s
    );
    expect(() => useVoiceInput({ agent: "DictationAgent", host: "example.com" })).toThrowError(/useVoiceInput\(\).*<ClientOnly>/s);
  });

  it("fails server rendering of a component that calls useVoiceAgent, with the same message", async () => {
    const Voice = defineComponent({
      setup() {
        const { status } = useVoiceAgent({ agent: "VoiceAgent", host: "example.com" });
        return () => h("div", status.value);
      }
    });
    await expect(renderToString(createSSRApp(Voice))).rejects.toThrowError(/useVoiceAgent\(\).*<ClientOnly>/s);
  });
});

describe("useAgentToolEvents on the server", () => {
  it("renders an empty state: it opens nothing itself", async () => {
    const Runs = defineComponent({
      setup() {
        const { unboundRuns, runsById } = useAgentToolEvents({ agent: null });
        return () => h("div", `${unboundRuns.value.length}:${Object.keys(runsById.value).length}`);
      }
    });
    expect(await renderToString(createSSRApp(Runs))).toBe("<div>0:0</div>");
  });
});
