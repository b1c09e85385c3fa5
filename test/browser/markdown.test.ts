import { describe, expect, it } from "vitest";
import { type Component, createApp, h, nextTick, shallowRef } from "vue";
import DemoMarkdown from "../../examples/chat/src/components/Markdown.vue";
import StarterMarkdown from "../../examples/starter/src/components/Markdown.vue";

declare global {
  interface Window {
    pwned?: string;
  }
}

// A reply a model (or a prompt injection in what it read) could stream: Markdown
// mixed with every common way HTML runs script.
const HOSTILE_REPLY = [
  "Here is **the answer** you asked for.",
  "",
  '<script>window.pwned = "script"</script>',
  '<img src="data:image/gif;base64,invalid" onerror="window.pwned = \'img\'">',
  '<svg onload="window.pwned = \'svg\'"><circle r="4" /></svg>',
  '<iframe srcdoc="<script>parent.pwned = \'iframe\'</script>"></iframe>',
  '<details open ontoggle="window.pwned = \'details\'"><summary>more</summary>hidden</details>',
  '<a href="javascript:window.pwned = \'anchor\'">an anchor</a> and [a link](javascript:window.pwned=\'link\')',
  '<object data="javascript:window.pwned = \'object\'"></object><embed src="javascript:window.pwned = \'embed\'">',
  '<form action="javascript:window.pwned = \'form\'"><button id="submit-me">go</button></form>',
  "",
  "- a list item with `code`",
  "- and the end."
].join("\n");

/** Renders `component` with the reply streamed in `step`-character chunks, then final. */
async function streamInto(component: Component, text: string, step: number) {
  const host = document.createElement("div");
  document.body.appendChild(host);
  const shown = shallowRef({ text: "", streaming: true });
  const app = createApp({ render: () => h(component, shown.value) });
  app.mount(host);
  for (let end = step; end < text.length + step; end += step) {
    shown.value = { text: text.slice(0, end), streaming: end < text.length };
    await nextTick();
  }
  shown.value = { text, streaming: false };
  await nextTick();
  return { host, unmount: () => (app.unmount(), host.remove()) };
}

/** Lets events a hostile element would fire (image errors, toggles, loads) happen. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe.each([
  ["the demo (examples/chat)", DemoMarkdown],
  ["the starter (examples/starter)", StarterMarkdown]
])("model text rendered by %s", (_, Markdown) => {
  it("runs no script a streamed reply holds, and still renders its Markdown", async () => {
    delete window.pwned;
    const { host, unmount } = await streamInto(Markdown, HOSTILE_REPLY, 7);
    await settle();
    expect(host.querySelector("strong")?.textContent).toBe("the answer");
    expect([...host.querySelectorAll("li")].map((item) => item.textContent?.trim())).toEqual(["a list item with code", "and the end."]);

    // Nothing that runs script is in the DOM, and nothing ran.
    expect(host.querySelectorAll("script, iframe, object, embed, form")).toHaveLength(0);
    for (const element of host.querySelectorAll("*")) {
      for (const attribute of element.attributes) {
        expect(attribute.name, `<${element.localName} ${attribute.name}>`).not.toMatch(/^on/i);
        expect(attribute.value, `<${element.localName} ${attribute.name}>`).not.toMatch(/^\s*javascript:/i);
      }
    }
    expect(window.pwned).toBeUndefined();
    unmount();
  });
});
