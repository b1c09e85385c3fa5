import { type VNode, defineComponent, h } from "vue";

/**
 * Renders model text with paragraphs, **bold** and `code`, without v-html:
 * the text is never parsed as HTML.
 */
export default defineComponent({
  name: "RichText",
  props: { text: { type: String, required: true } },
  setup(props) {
    return () =>
      props.text
        .split(/\n{2,}/)
        .filter((paragraph) => paragraph.trim() !== "")
        .map((paragraph) => h("p", inline(paragraph)));
  }
});

function inline(text: string): Array<VNode | string> {
  const nodes: Array<VNode | string> = [];
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    nodes.push(match[1] !== undefined ? h("strong", match[1]) : h("code", match[2]));
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}
