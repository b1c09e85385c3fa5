import { createApp } from "vue";
import App from "./App.vue";
import { persist } from "./persist";
import "markstream-vue/index.css";
import "./style.css";

// Mount once the kept transcripts are read (a few milliseconds): the first frame already shows the conversation.
void persist.ready.then(() => createApp(App).mount("#app"));
