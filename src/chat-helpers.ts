import type { JSONSchema7 } from "ai";
import { warnDeprecated } from "./core/diagnostics";
import { type AITool, toolsWithoutExecute } from "./core/tools";

/** JSON Schema of a client tool's input (upstream's alias of the AI SDK's `JSONSchema7`). */
export type JSONSchemaType = JSONSchema7;

/**
 * @deprecated Use `needsApproval` on server tools. The names of the tools
 * without `execute`: the ones upstream's deprecated confirmation flow waits on.
 */
export function detectToolsRequiringConfirmation(tools?: Record<string, AITool>): string[] {
  warnDeprecated("detectToolsRequiringConfirmation", "detectToolsRequiringConfirmation(); use needsApproval on server-side tools.");
  return toolsWithoutExecute(tools);
}
