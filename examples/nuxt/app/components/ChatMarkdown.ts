import { markdownSafety } from "~/utils/markdown-safety";

// A reply's Markdown, drawn with Nuxt UI's prose components (bold, lists, code blocks,
// tables), the way Nuxt UI's chat template renders replies: with Comark (`@comark/nuxt`).
// Safely: HTML in a reply is shown as text, and `markdownSafety` keeps only Markdown's
// own elements and attributes. Parsed on the server too, so the HTML holds the formatting.
export default defineComarkComponent({
  name: "ChatMarkdown",
  html: false,
  plugins: [markdownSafety()],
  class: "*:first:mt-0 *:last:mb-0"
});
