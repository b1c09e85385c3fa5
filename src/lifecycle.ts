import { getCurrentScope, onScopeDispose } from "vue";
// Development-only code is guarded inline (see core/diagnostics.ts).
declare const process: { env: { NODE_ENV?: string } };

/**
 * Throws at once when there is no browser: the composables open a WebSocket
 * on creation, which cannot happen during server-side rendering.
 */
export function assertBrowser(name: string): void {
  if (typeof window === "undefined" || typeof WebSocket === "undefined") {
    throw new Error(
      process.env.NODE_ENV !== "production"
        ? `[agents-vue] ${name}() opens a WebSocket and runs only in the browser, but it was called during server-side rendering. ` +
            "Render the component that calls it inside <ClientOnly> (Nuxt) or a `.client.vue` component, or call it from onMounted()."
        : `[agents-vue] ${name}() opens a WebSocket and runs only in the browser.`
    );
  }
}

/** Warns in development when a composable runs outside a component or effect scope (nothing would clean it up). */
export function warnOutsideScope(name: string): void {
  if (process.env.NODE_ENV !== "production" && !getCurrentScope()) {
    console.warn(
      `[agents-vue] ${name}() was called outside a component setup or effectScope(); ` +
        "its socket, listeners and timers will not be released automatically. Call it in setup(), or inside effectScope().run() and stop the scope when done."
    );
  }
}

/** Registers cleanup with the current scope, when there is one. */
export function onDispose(cleanup: () => void): void {
  if (getCurrentScope()) onScopeDispose(cleanup);
}
