import type { Page } from "./testing-kit";
import { type Component, createRenderer } from "vue";

/**
 * Vue's own renderer (`createRenderer` from runtime-core) over a plain object
 * tree, to mount components in Node without a DOM: elements keep their
 * props (event handlers included) and children, text nodes their text.
 */
export interface NodeElement {
  tag: string;
  props: Record<string, unknown>;
  children: TreeNode[];
  parent: NodeElement | null;
}
export interface NodeText {
  text: string;
  parent: NodeElement | null;
}
export type TreeNode = NodeElement | NodeText;

const isElement = (node: TreeNode): node is NodeElement => "tag" in node;

function detach(node: TreeNode): void {
  const parent = node.parent;
  if (!parent) return;
  parent.children.splice(parent.children.indexOf(node), 1);
  node.parent = null;
}

const { createApp } = createRenderer<TreeNode, NodeElement>({
  createElement: (tag) => ({ tag, props: {}, children: [], parent: null }),
  createText: (text) => ({ text, parent: null }),
  createComment: (text) => ({ text: "", comment: text, parent: null }) as NodeText,
  setText: (node, text) => void ((node as NodeText).text = text),
  setElementText: (element, text) => {
    for (const child of element.children) child.parent = null;
    element.children = text ? [{ text, parent: element }] : [];
  },
  insert: (child, parent, anchor) => {
    detach(child);
    const index = anchor ? parent.children.indexOf(anchor) : -1;
    if (index >= 0) parent.children.splice(index, 0, child);
    else parent.children.push(child);
    child.parent = parent;
  },
  remove: detach,
  parentNode: (node) => node.parent,
  nextSibling: (node) => {
    const siblings = node.parent?.children ?? [];
    return siblings[siblings.indexOf(node) + 1] ?? null;
  },
  patchProp: (element, key, _previous, next) => {
    if (next === null || next === undefined) delete element.props[key];
    else element.props[key] = next;
  }
});

/** The text of a node and everything under it. */
export function textOf(node: TreeNode): string {
  return isElement(node) ? node.children.map(textOf).join("") : node.text;
}

/** Every element under a node with this attribute value. */
export function findAll(node: TreeNode, attribute: string, value: string): NodeElement[] {
  if (!isElement(node)) return [];
  const own = node.props[attribute] === value ? [node] : [];
  return [...own, ...node.children.flatMap((child) => findAll(child, attribute, value))];
}

/** Mounts a component in the object tree; `root` is the container. */
export function mountInNode(component: Component, props: Record<string, unknown> = {}): { root: NodeElement; unmount: () => void } {
  const root: NodeElement = { tag: "root", props: {}, children: [], parent: null };
  const app = createApp(component, props);
  app.mount(root);
  return { root, unmount: () => app.unmount() };
}

/** A component mounted in the object tree, driven as the testing kit's scenarios drive a page (by `data-testid`). */
export function pageInNode(component: Component, props: Record<string, unknown> = {}): { page: Page; root: NodeElement; unmount: () => void } {
  const { root, unmount } = mountInNode(component, props);
  const all = (testId: string) => findAll(root, "data-testid", testId);
  const page: Page = {
    text: (testId) => all(testId).map(textOf).join(""),
    texts: (testId) => all(testId).map(textOf),
    click: (testId) => {
      const [button] = all(testId);
      if (!button) throw new Error(`no ${testId} button on the page`);
      (button.props.onClick as () => void)();
    }
  };
  return { page, root, unmount };
}
