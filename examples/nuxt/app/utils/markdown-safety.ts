import { defineComarkPlugin } from "comark";
import type { ComarkElement, ComarkElementAttributes, ComarkNode } from "comark";

// A reply is text from a model, so the Markdown renderer treats it as untrusted. `ChatMarkdown`
// parses with `html: false` (an HTML tag in a reply shows as text), and this plugin then keeps only
// the elements Markdown itself produces, each with only the attributes it needs: Comark's
// component syntax (`::name`, `:name[…]`, `{attr=…}`) can name any tag or any global component,
// and with it a reply could ask for a <script>, an <iframe>, an `onclick`, or a class that covers
// the page.

/** Attributes each Markdown element may keep; any other tag is unwrapped to its text. */
const ALLOWED: Record<string, readonly string[]> = {
  p: [], br: [], hr: [], strong: [], em: [], del: [], code: [], pre: ["language"], blockquote: ["as"],
  h1: [], h2: [], h3: [], h4: [], h5: [], h6: [],
  ul: [], ol: ["start"], li: [], input: ["type", ":checked", ":disabled"],
  a: ["href", "title"], img: ["src", "alt", "title"],
  table: [], thead: [], tbody: [], tr: [], th: [], td: []
};
/** GitHub's alert blockquotes (`> [!NOTE]`), drawn by Nuxt UI's prose components. */
const ALERTS = new Set(["note", "tip", "important", "warning", "caution"]);
const SAFE_URL = /^(https?:|mailto:|#|\/(?!\/))/i;

function keep(tag: string, name: string, value: unknown): boolean {
  if (name === "href" || name === "src") return typeof value === "string" && SAFE_URL.test(value.trim());
  if (name === "as") return typeof value === "string" && ALERTS.has(value);
  if (name === "type") return value === "checkbox";
  return true;
}

function attributes(tag: string, props: ComarkElementAttributes): ComarkElementAttributes {
  const allowed = ALLOWED[tag] ?? [];
  return Object.fromEntries(Object.entries(props).filter(([name, value]) => allowed.includes(name) && keep(tag, name, value)));
}

/** The node as a reply may show it: allowed elements cleaned, anything else replaced by its text. */
function clean(node: ComarkNode): ComarkNode[] {
  if (typeof node === "string") return [node];
  const [tag, props, ...children] = node;
  if (tag === null) return []; // an HTML comment
  const inner = children.flatMap(clean);
  if (!(tag in ALLOWED) || (tag === "input" && props.type !== "checkbox")) {
    // Component syntax the model did not mean (`a :b c`): show the name it swallowed.
    return inner.length ? inner : [`:${tag}`];
  }
  return [[tag, attributes(tag, props), ...inner] as ComarkElement];
}

/** Comark plugin: limits a parsed reply to plain Markdown elements and safe attributes. */
export const markdownSafety = defineComarkPlugin(() => ({
  name: "markdown-safety",
  post(state) {
    state.tree.nodes = state.tree.nodes.flatMap(clean);
  }
}));
