import { createApp } from "vue";
import App from "./App.vue";
import "markstream-vue/index.css";
import "./style.css";

createApp(App).mount("#app");
