/**
 * Bounds for the test suite's startup waits (browser launch and connect,
 * `wrangler dev` ready, the e2e tier's global setup): a start that hangs
 * fails in minutes, with a message naming the step, instead of holding a run
 * until CI kills it. Plain Node 22; used by the vitest configs, the global
 * setup and scripts/ensure-browser.ts.
 */

/** How long each startup step may take, in ms. */
export const STARTUP_TIMEOUTS = {
  /** Playwright launching Chromium. */
  browserLaunchMs: 60_000,
  /** Vitest's browser page opening and connecting back to the test runner. */
  browserConnectMs: 90_000,
  /** `wrangler dev` answering `GET /health` with 200 after it was spawned. */
  wranglerReadyMs: 90_000,
  /** The e2e tier's whole global setup (port, spawn, ready, retries on a port clash). */
  globalSetupMs: 240_000,
  /** scripts/ensure-browser.ts asking Playwright where its Chromium is. */
  browserProbeMs: 30_000,
  /** scripts/ensure-browser.ts installing Debian's Chromium with apt-get. */
  browserInstallMs: 600_000
} as const;

/** A startup step did not finish within its bound. */
export class StartupTimeoutError extends Error {
  readonly step: string;
  readonly timeoutMs: number;
  constructor(step: string, timeoutMs: number, detail = "") {
    super(`Startup step "${step}" did not finish within ${timeoutMs / 1000} s${detail ? `: ${detail}` : "."}`);
    this.name = "StartupTimeoutError";
    this.step = step;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `work`, or a {@link StartupTimeoutError} naming `step` once `timeoutMs`
 * passed. What `work` brings after that is handed to `onLate` (e.g. a server
 * that came up too late is stopped), so nothing is left running.
 */
export function withStartupTimeout<T>(
  step: string,
  timeoutMs: number,
  work: Promise<T>,
  onLate?: (value: T) => unknown
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new StartupTimeoutError(step, timeoutMs));
    }, timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (!timedOut) resolve(value);
        else void Promise.resolve(onLate?.(value)).catch(() => undefined);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!timedOut) reject(error);
      }
    );
  });
}
