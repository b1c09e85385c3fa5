// A: agents-vue (`useAgentChat`, default options), imported from source.
import { register } from "../harness";
import { createApp, h, shallowRef } from "vue";
import type { MountConfig } from "../harness";
import Chat from "./Chat.vue";
import { sender } from "./sender";

const config = shallowRef<MountConfig | null>(null);
let mounts = 0;

createApp({
  render: () => (config.value ? h(Chat, { key: mounts, config: config.value }) : null)
}).mount("#app");

register({
  name: "A",
  mount(next) {
    mounts++;
    config.value = next;
  },
  unmount() {
    config.value = null;
  },
  send(text) {
    sender.current?.(text);
  }
});
