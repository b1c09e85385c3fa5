/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Connect to this worker host instead of the page's own (e.g. a deployed `my-app.workers.dev`). */
  readonly VITE_AGENT_HOST?: string;
}
