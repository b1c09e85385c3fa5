/**
 * The files a page of the docs shows: each fenced code block whose first line is
 * a comment naming a path (`// src/components/Chat.test.ts`,
 * `<!-- src/components/Chat.vue -->`), with its text exactly as written, so a
 * scratch project can run the Testing guide's examples verbatim (`npm run
 * test:consumer`). Plain Node 22.
 */

/** One file a page shows: its path and its text as the page has it. */
export interface ReadmeFile {
  path: string;
  text: string;
}

const FENCE = /^```[a-z]*\n([\s\S]*?)^```$/gm;
const NAMED = /^(?:\/\/|<!--)\s*(src\/[\w./-]+?)\s*(?:-->)?\s*$/;

/** The named files of a page (or part of one), in order; a block whose first line names no path is left out. */
export function readmeFiles(section: string): ReadmeFile[] {
  const files: ReadmeFile[] = [];
  for (const block of section.matchAll(FENCE)) {
    const text = block[1]!;
    const path = NAMED.exec(text.split("\n", 1)[0]!)?.[1];
    if (path) files.push({ path, text });
  }
  return files;
}
