// Nuxt UI's code blocks (ProsePre) put their copy button over the block's top-right corner. Code in a reply
// wraps (whitespace-pre-wrap), so room at the block's end keeps every line clear of the button, also on a phone.
export default defineAppConfig({
  ui: {
    prose: {
      pre: {
        slots: { base: "pe-12" }
      }
    }
  }
});
