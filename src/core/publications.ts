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

/** How many chats hold a change back for their throttle window now, after adding `change` (+1 holds, -1 lets go). */
export function withheldPublications(change = 0): number {
  const holder = globalThis as { [KEY]?: number };
  return (holder[KEY] = (holder[KEY] ?? 0) + change);
}
