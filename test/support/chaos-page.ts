/**
 * A page of its own for the chaos suite's reloads: an `<iframe srcdoc>` (same
 * origin as the test, so it shares IndexedDB and Web Locks with it) whose
 * document mounts one chat with `persist`. `location.reload()` in the frame
 * is a real page reload: a new document, new module instances, the old
 * page's sockets, locks and timers gone with it. The test reads the frame's
 * chat from `window.chaosChat` once it is mounted.
 */
import type { UIMessage } from "ai";
import { useAgentChat, type UseAgentChatOptions, type UseAgentChatReturn } from "../../src";
import { indexedDBPersistence } from "../../src/persist";
import { mountComposable } from "./mount";

/** What the frame's chat is given (JSON: it is written into the frame's document). */
export interface ChaosPageConfig {
  client: { agent: string; host: string; name: string; minReconnectionDelay?: number; maxReconnectionDelay?: number };
  databaseName: string;
  body?: Record<string, unknown>;
}

type Chat = UseAgentChatReturn<UIMessage>;

declare global {
  interface Window {
    chaosChat?: Chat;
    /** How far the page's boot got. */
    chaosStage?: string;
    chaosErrors?: string[];
  }
}

/** Mounts the frame's chat (run by the frame's own document). */
export async function boot(config: ChaosPageConfig): Promise<void> {
  window.chaosStage = "reading the cache";
  const persist = indexedDBPersistence({ databaseName: config.databaseName });
  await persist.ready;
  window.chaosStage = "mounting";
  const options: UseAgentChatOptions = { client: config.client, persist, body: config.body };
  window.chaosChat = mountComposable(() => useAgentChat(options)).result;
}

/** An open page (`frame`) with its chat, and the ways it can end. */
export interface ChaosPage {
  readonly frame: HTMLIFrameElement;
  /** The chat of the document now in the frame (undefined while a reload loads). */
  chat(): Chat | undefined;
  /** A real page reload; resolves once the new document's chat is mounted. */
  reload(): Promise<void>;
  /** Closes the page (the frame goes, with its document). */
  close(): void;
}

/** Opens a page with one chat; resolves once its chat is mounted. */
export async function openChaosPage(config: ChaosPageConfig, timeout = 15_000): Promise<ChaosPage> {
  const frame = document.createElement("iframe");
  // The module is served (and transformed) by the test's own Vite server, at the test's origin.
  const entry = new URL("./chaos-page.ts", import.meta.url).pathname;
  // How far the page got, and what failed there, for the error of a page that does not mount.
  frame.srcdoc = `<!doctype html><body><script>
window.chaosStage = "loading";
window.chaosErrors = [];
addEventListener("error", (event) => chaosErrors.push(String(event.message)));
addEventListener("unhandledrejection", (event) => chaosErrors.push(String(event.reason)));
</script><script type="module">
window.chaosStage = "importing";
const { boot } = await import(${JSON.stringify(entry)});
await boot(${JSON.stringify(config).replaceAll("<", "\\u003c")});
</script></body>`;
  // Resolves with nothing, never with the chat: a chat is awaitable (for <Suspense>) and settles only once its
  // first load answers, which with the agent down is not yet.
  const mounted = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const deadline = performance.now() + timeout;
      const poll = () => {
        try {
          if (frame.contentWindow?.chaosChat) return resolve();
          if (performance.now() > deadline) {
            const page = frame.contentWindow;
            const where = `stage ${page?.chaosStage ?? "none"}, errors ${JSON.stringify(page?.chaosErrors ?? [])}, ready state ${page?.document.readyState}, at ${page?.location.href}`;
            return reject(new Error(`the chaos page for ${config.client.name} did not mount within ${timeout} ms (${where})`));
          }
        } catch (error) {
          return reject(new Error(`the chaos page for ${config.client.name} cannot be read: ${String(error)}`));
        }
        setTimeout(poll, 10);
      };
      poll();
    });
  document.body.appendChild(frame);
  await mounted();
  return {
    frame,
    chat: () => frame.contentWindow?.chaosChat,
    async reload() {
      // The new document's window is a new object: its `chaosChat` appears once it has mounted.
      const loaded = new Promise<void>((resolve) => frame.addEventListener("load", () => resolve(), { once: true }));
      frame.contentWindow!.location.reload();
      await loaded;
      return mounted();
    },
    close: () => frame.remove()
  };
}
