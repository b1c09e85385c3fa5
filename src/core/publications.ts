/**
 * Rule (a test sees what the screen will show): a chat that holds a change
 * back for its throttle window says so here, and the test kit
 * (`agents-vue/testing`) counts such chats as "still moving": its `settled()`
 * and `advance()` resolve only once every held change is published, so a
 * test needs to know nothing of `throttle`.
 *
 * The count lives on `globalThis` under a registered symbol, not in this
 * module: the kit and the library are separate entries, and a test runner may
 * load them as two copies; both still read the one count. It costs an app a
 * counter bump per throttle window.
 */
const KEY = Symbol.for("agents-vue.withheld-publications");

interface Withheld {
  count: number;
}

function withheld(): Withheld {
  const holder = globalThis as { [KEY]?: Withheld };
  return (holder[KEY] ??= { count: 0 });
}

/** One chat started (`true`) or stopped (`false`) holding a change back. */
export function holdingPublication(holding: boolean): void {
  const counter = withheld();
  counter.count = Math.max(0, counter.count + (holding ? 1 : -1));
}

/** How many chats hold a change back for their throttle window now. */
export function withheldPublications(): number {
  return withheld().count;
}
