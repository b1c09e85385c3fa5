// Development-only code is guarded inline (below).
declare const process: { env: { NODE_ENV?: string } };

/*
 * Development builds and production builds. Diagnostics meant only for the
 * developer (deprecations, misuse) sit behind `process.env.NODE_ENV !==
 * "production"`, written out at each site as Vue's own bundler build does:
 * the expression stays in the published code for the app's bundler to
 * replace, and a production build folds it to `false` and drops the branch,
 * message included, or keeps only a short production form of the message.
 * Never through a shared constant: esbuild does not inline a constant from a
 * module that imports a peer (the published chunks all do), so a flag
 * exported from here kept every message in an esbuild app. What a user must
 * know (failed reads, bad frames, lost sends, errors thrown by callbacks,
 * `connectionError`) is not behind it.
 */

const warnedDeprecations = new Set<string>();

/** One warning per key per page, for deprecated options (as upstream does); development only. */
export function warnDeprecated(key: string, message: string): void {
  if (process.env.NODE_ENV === "production" || warnedDeprecations.has(key)) return;
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
