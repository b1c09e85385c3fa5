/**
 * Runs axe-core (WCAG 2 A and AA rules) in a page of the chat demo, for
 * `npm run demo:check`. Returns one line per failing element; none means the
 * page passed.
 */
import { createRequire } from "node:module";
import type * as Axe from "axe-core";
import type { Page } from "playwright/test";

const AXE_SCRIPT = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** The rule sets checked: WCAG 2.0, 2.1 and 2.2, levels A and AA. */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE_SCRIPT });
  const violations = await page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: typeof Axe }).axe;
    const result = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? "",
      nodes: violation.nodes.map((node) => ({ target: node.target.join(" "), summary: node.failureSummary ?? "" }))
    }));
  }, AXE_TAGS);
  return violations.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.id} (${violation.impact}) at ${node.target}: ${node.summary.replace(/\s+/g, " ").trim()}`)
  );
}
