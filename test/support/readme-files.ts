/**
 * The files a README section shows: each fenced code block whose first line is
 * a comment naming a path (`// src/components/Chat.test.ts`,
 * `<!-- src/components/Chat.vue -->`), with its text exactly as written, so a
 * scratch project can run the README's examples verbatim (`npm run
 * test:consumer`). Plain Node 22.
 */

/** One file of a README section: its path and its text as the README has it. */
export interface ReadmeFile {
  path: string;
  text: string;
}

const FENCE = /^```[a-z]*\n([\s\S]*?)^```$/gm;
const NAMED = /^(?:\/\/|<!--)\s*(src\/[\w./-]+?)\s*(?:-->)?\s*$/;

/** The text under `heading` (a `## ` line), up to the next `## ` heading. */
export function readmeSection(readme: string, heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`the README has no "${heading}" section`);
  const rest = readme.slice(start + heading.length + 2);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The named files of `section`, in order; a block whose first line names no path is left out. */
export function readmeFiles(section: string): ReadmeFile[] {
  const files: ReadmeFile[] = [];
  for (const block of section.matchAll(FENCE)) {
    const text = block[1]!;
    const path = NAMED.exec(text.split("\n", 1)[0]!)?.[1];
    if (path) files.push({ path, text });
  }
  return files;
}
