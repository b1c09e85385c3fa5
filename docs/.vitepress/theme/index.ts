/**
 * The site's theme: VitePress's default theme, plus the playground chat as a
 * global component (`<PlaygroundChat />` in any page, inside `<ClientOnly>`:
 * the composables run in the browser only). It loads on demand, so pages
 * without it never fetch the library.
 */
import DefaultTheme from "vitepress/theme";
import type { Theme } from "vitepress";
import { defineAsyncComponent } from "vue";
import "./style.css";

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component(
      "PlaygroundChat",
      defineAsyncComponent(() => import("./playground/PlaygroundChat.vue"))
    );
  }
} satisfies Theme;
