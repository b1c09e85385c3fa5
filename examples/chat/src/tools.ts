import type { AITool } from "agents-vue";

/**
 * Tools that run in the browser. Their schemas go to the agent with every
 * request; when the model calls one, `execute` runs here and the composable
 * sends the output back so the agent can continue.
 */
export const clientTools = {
  getLocalTime: {
    description: "Get the user's local time and time zone, from their browser.",
    parameters: { type: "object", properties: {} },
    execute: async () => {
      const now = new Date();
      return {
        time: now.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }),
        date: now.toLocaleDateString([], { weekday: "long", month: "long", day: "numeric" }),
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone
      };
    }
  }
} satisfies Record<string, AITool>;

export const clientToolNames = new Set(Object.keys(clientTools));
