declare const process: { env: { NODE_ENV?: string } };

/**
 * Development build? The one guard for diagnostics meant for the developer
 * (deprecations, misuse). As in Vue's own bundler build, `process.env.NODE_ENV`
 * stays in the published code for the app's bundler to replace: a production
 * build folds this to `false` and drops every `if (isDevelopment)` branch,
 * messages included. What a user must know (failed reads, bad frames, lost
 * sends, errors thrown by callbacks) is not behind it.
 */
export const isDevelopment: boolean = process.env.NODE_ENV !== "production";

const warnedDeprecations = new Set<string>();

/** One warning per key per page, for deprecated options (as upstream does); development only. */
export function warnDeprecated(key: string, message: string): void {
  if (!isDevelopment || warnedDeprecations.has(key)) return;
  warnedDeprecations.add(key);
  console.warn(`[agents-vue] Deprecated: ${message}`);
}

/** Runs a user callback; what it throws is logged, never thrown into the chat. */
export function callUser(name: string, run: () => void): void {
  try {
    run();
  } catch (error) {
    console.error(`[agents-vue] ${name} threw:`, error);
  }
}

/** A `console.warn` that says each kind of problem at most five times, so a flood of bad frames cannot flood the console. */
export function limitedWarner(): (key: string, message: string) => void {
  const counts = new Map<string, number>();
  return (key, message) => {
    const count = counts.get(key) ?? 0;
    if (count >= 5) return;
    counts.set(key, count + 1);
    console.warn(`[agents-vue] ${message}${count === 4 ? " (further warnings like this are muted)" : ""}`);
  };
}
