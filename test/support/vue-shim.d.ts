// For plain `tsc` (vitest's type tier), which cannot read .vue files; vue-tsc
// (npm run typecheck) resolves them itself and never uses this.
declare module "*.vue" {
  const component: import("vue").Component;
  export default component;
}
