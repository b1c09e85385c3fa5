/**
 * The world's clock: while installed, `setTimeout`, `setInterval`, their
 * clears and `Date.now` are the world's, so every timer of the session (the
 * throttle, the socket bridge's delta runs, the transport's replay batches and
 * probe timeouts, a probe's grace, a continuation's launch) fires only when
 * the world says. `setImmediate` and microtasks stay real: the world drains
 * them between its steps.
 */

interface Timer {
  id: number;
  at: number;
  /** Order of arming: timers due at the same time fire in it. */
  order: number;
  run: () => void;
  every: number | null;
}

type TimerHandle = ReturnType<typeof setTimeout>;

export class WorldClock {
  now = 1_700_000_000_000;
  readonly #timers = new Map<number, Timer>();
  #ids = 0;
  #saved: { setTimeout: typeof setTimeout; clearTimeout: typeof clearTimeout; setInterval: typeof setInterval; clearInterval: typeof clearInterval; now: () => number } | null = null;

  install(): void {
    if (this.#saved) return;
    this.#saved = { setTimeout, clearTimeout, setInterval, clearInterval, now: Date.now };
    const arm = (run: (...args: unknown[]) => void, delay: unknown, args: unknown[], every: boolean): TimerHandle => {
      const ms = Math.max(0, Number(delay) || 0);
      const id = ++this.#ids;
      this.#timers.set(id, { id, at: this.now + ms, order: id, run: () => run(...args), every: every ? Math.max(1, ms) : null });
      return id as unknown as TimerHandle;
    };
    const clear = (handle: unknown) => void this.#timers.delete(Number(handle));
    globalThis.setTimeout = ((run: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => arm(run, delay, args, false)) as typeof setTimeout;
    globalThis.setInterval = ((run: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => arm(run, delay, args, true)) as typeof setInterval;
    globalThis.clearTimeout = clear as typeof clearTimeout;
    globalThis.clearInterval = clear as typeof clearInterval;
    Date.now = () => this.now;
  }

  uninstall(): void {
    const saved = this.#saved;
    if (!saved) return;
    this.#saved = null;
    globalThis.setTimeout = saved.setTimeout;
    globalThis.clearTimeout = saved.clearTimeout;
    globalThis.setInterval = saved.setInterval;
    globalThis.clearInterval = saved.clearInterval;
    Date.now = saved.now;
    this.#timers.clear();
  }

  /** Forgets every armed timer (a new world starts with none). */
  reset(): void {
    this.#timers.clear();
  }

  get pending(): number {
    return this.#timers.size;
  }

  /** How long until the next timer is due (ms), or undefined when none is armed. */
  nextIn(): number | undefined {
    const next = this.#next();
    return next ? Math.max(0, next.at - this.now) : undefined;
  }

  #next(): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.#timers.values()) if (!best || timer.at < best.at || (timer.at === best.at && timer.order < best.order)) best = timer;
    return best;
  }

  /** Moves the clock to the next timer and fires it; false when none is armed. */
  fireNext(): boolean {
    const timer = this.#next();
    if (!timer) return false;
    this.now = Math.max(this.now, timer.at);
    if (timer.every === null) this.#timers.delete(timer.id);
    else {
      timer.at = this.now + timer.every;
      timer.order = ++this.#ids;
    }
    timer.run();
    return true;
  }
}
