import { type Component, createApp } from "vue";
import type { Page } from "./testing-kit";

/** A component mounted in the document, driven as the testing kit's scenarios drive a page (by `data-testid`). */
export function pageInDom(component: Component, props: Record<string, unknown> = {}): { page: Page; unmount: () => void } {
  const host = document.createElement("div");
  document.body.appendChild(host);
  const app = createApp(component, props);
  app.mount(host);
  const all = (testId: string) => Array.from(host.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`));
  const page: Page = {
    text: (testId) => all(testId).map((element) => element.textContent ?? "").join(""),
    texts: (testId) => all(testId).map((element) => element.textContent ?? ""),
    click: (testId) => {
      const [button] = all(testId);
      if (!button) throw new Error(`no ${testId} button on the page`);
      button.click();
    }
  };
  return { page, unmount: () => (app.unmount(), host.remove()) };
}
