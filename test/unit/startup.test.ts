/**
 * The test suite's startup waits are bounded (issue 29, 9): a start that
 * hangs fails with a message naming the step.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { STARTUP_TIMEOUTS, StartupTimeoutError, withStartupTimeout } from "../support/startup.ts";
import { startWorker, startWorkerTwice } from "../support/wrangler.ts";

const NEVER_READY = fileURLToPath(new URL("../fixtures/startup/never-ready.mjs", import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("startup timeouts (issue 29, 9)", () => {
  it("a wrangler that never gets ready fails the step 'wrangler dev ready' with its output, and is stopped", async () => {
    const error = await startWorker({ wranglerBin: NEVER_READY, readyTimeoutMs: 1_500 }).then(
      () => undefined,
      (caught: unknown) => caught
    );
    expect(error).toBeInstanceOf(StartupTimeoutError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Startup step "wrangler dev ready" did not finish within 1.5 s: http:\/\/127\.0\.0\.1:\d+\/health never answered 200/);
    expect(message).toContain("never-ready: started, and will never listen");
    const pid = Number(/wrangler pid (\d+) stopped/.exec(message)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it("startWorkerTwice: a start that never gets ready is stopped, said on stderr with its output, and tried once more", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const error = await startWorkerTwice({ wranglerBin: NEVER_READY, readyTimeoutMs: 1_500 }, "startup-test").then(
        () => undefined,
        (caught: unknown) => caught
      );
      expect(error).toBeInstanceOf(StartupTimeoutError);
      expect(warn).toHaveBeenCalledTimes(1);
      const said = String(warn.mock.calls[0]?.[0]);
      expect(said).toMatch(/^\[startup-test\] wrangler dev did not get ready; starting it once more\./);
      expect(said).toContain("never-ready: started, and will never listen");
      // Both starts were stopped.
      for (const message of [said, (error as Error).message]) {
        const pid = Number(/wrangler pid (\d+) stopped/.exec(message)?.[1]);
        expect(pid).toBeGreaterThan(0);
        expect(alive(pid)).toBe(false);
      }
    } finally {
      warn.mockRestore();
    }
  }, 30_000);

  it("a step that never finishes rejects naming the step; what it brings later is handed to onLate", async () => {
    vi.useFakeTimers();
    try {
      let finish!: (value: string) => void;
      const onLate = vi.fn();
      const bounded = withStartupTimeout("e2e global setup: start wrangler dev", 2_000, new Promise<string>((resolve) => (finish = resolve)), onLate);
      const settled = bounded.catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(String(await settled)).toBe('StartupTimeoutError: Startup step "e2e global setup: start wrangler dev" did not finish within 2 s.');
      finish("late server");
      await vi.advanceTimersByTimeAsync(0);
      expect(onLate).toHaveBeenCalledWith("late server");
    } finally {
      vi.useRealTimers();
    }
  });

  it("a step that finishes in time gives its value, and its failure as it is", async () => {
    await expect(withStartupTimeout("quick", 1_000, Promise.resolve(1))).resolves.toBe(1);
    await expect(withStartupTimeout("broken", 1_000, Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });

  it("every startup step has a bound of minutes, not hours", () => {
    for (const ms of Object.values(STARTUP_TIMEOUTS)) expect(ms).toBeGreaterThan(0);
    expect(Math.max(...Object.values(STARTUP_TIMEOUTS))).toBeLessThanOrEqual(10 * 60_000);
  });
});
