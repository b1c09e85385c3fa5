/**
 * Timed steps and child processes for the scripts that drive whole apps
 * (`npm run example:nuxt`, `npm run test:consumer`). Plain Node 22.
 */
import { spawn } from "node:child_process";

export interface Steps {
  /** Runs one step: prints its name, then `ok (N s)` or lets the error through. */
  step<T>(name: string, run: () => Promise<T>): Promise<T>;
  /** `name N s, name N s, …` for the final line. */
  summary(): string;
}

export function createSteps(): Steps {
  const timings: Array<[string, number]> = [];
  return {
    async step(name, run) {
      const started = Date.now();
      console.log(`• ${name}`);
      const result = await run();
      const seconds = (Date.now() - started) / 1000;
      timings.push([name, seconds]);
      console.log(`  ok (${seconds.toFixed(1)} s)`);
      return result;
    },
    summary: () => timings.map(([name, seconds]) => `${name.split(" (")[0]} ${seconds.toFixed(1)} s`).join(", ")
  };
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Keep the output to ourselves and show its tail only when the command fails. */
  quiet?: boolean;
}

/** Runs a command to completion; rejects with its exit code (and, when quiet, its last lines). */
export function run(command: string, args: string[], options: RunOptions): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: options.quiet ? ["ignore", "pipe", "pipe"] : "inherit"
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", fail);
    child.once("exit", (code, signal) => {
      if (code === 0) return done(output);
      const tail = options.quiet ? `\n${output.trim().split("\n").slice(-40).join("\n")}` : "";
      fail(new Error(`${command} ${args.join(" ")} failed in ${options.cwd} (${signal ?? `exit ${code}`})${tail}`));
    });
  });
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
