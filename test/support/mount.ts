import { createApp, defineComponent, h, type App } from "vue";

/** Runs a composable inside a mounted component; `unmount()` disposes its scope. */
export function mountComposable<T>(setup: () => T): { result: T; app: App; unmount: () => void } {
  let result!: T;
  const host = document.createElement("div");
  document.body.appendChild(host);
  const app = createApp(
    defineComponent({
      setup() {
        result = setup();
        return () => h("div");
      }
    })
  );
  app.mount(host);
  return {
    result,
    app,
    unmount: () => {
      app.unmount();
      host.remove();
    }
  };
}
