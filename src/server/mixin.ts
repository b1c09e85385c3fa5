// oxlint-disable-next-line typescript/no-explicit-any -- TypeScript requires any[] for a mixin constructor
type OpenClass = abstract new (...args: any[]) => object;

/**
 * A class whose instances are `Host`s. Mixins take `T & HostClass<Host>`
 * rather than constraining `T` by it, so a generic base (`AIChatAgent<Env>`)
 * stays generic through nested mixins: `withA(withB(AIChatAgent))<Env>`.
 */
export type HostClass<Host> = abstract new (...args: never[]) => Host;

/**
 * A subclass of `Base` whose constructor calls `install(this)` right after
 * `super()`: the class mixin form of a helper meant for the constructor.
 */
export function installingMixin<Host extends object, T extends HostClass<object>>(
  Base: T & HostClass<Host>,
  install: (agent: Host) => void
): T {
  abstract class Installing extends (Base as unknown as OpenClass) {
    // oxlint-disable-next-line typescript/no-explicit-any -- see OpenClass
    constructor(...args: any[]) {
      super(...args);
      install(this as unknown as Host);
    }
  }
  return Installing as unknown as T;
}
