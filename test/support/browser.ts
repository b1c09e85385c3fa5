import { existsSync } from "node:fs";

/**
 * The Chromium the browser tiers launch: `CHROMIUM_PATH` when set, else a
 * system Chromium, else Playwright's own browser (`undefined` lets it pick).
 */
export function chromiumPath(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fromEnv;
  for (const candidate of ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Flags that keep a headless Chromium quiet on a closed network and inside containers. */
export const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  // The voice tests: a synthetic microphone, granted without a prompt, and
  // audio that may play without a user gesture.
  "--use-fake-device-for-media-stream",
  "--use-fake-ui-for-media-stream",
  "--autoplay-policy=no-user-gesture-required"
];
