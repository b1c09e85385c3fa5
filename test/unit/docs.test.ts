/**
 * The documentation is part of the API. The site (docs/) and the README:
 * - the option and return tables of each composable list exactly its members;
 * - the API reference gives every export of every package entry a heading of
 *   its own, and names nothing the entry does not export;
 * - every code block typechecks against the library's source;
 * - the README's example and the first chat of Getting started are the
 *   components `test/browser/docs-examples.test.ts` runs;
 * - the README stays a front door: at most 200 lines.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const docsDir = join(root, "docs");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** Every markdown page of the site (not its build output). */
function pages(dir = docsDir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === ".vitepress" || name === "node_modules") return [];
    if (statSync(path).isDirectory()) return pages(path);
    return name.endsWith(".md") ? [relative(root, path)] : [];
  });
}

/** The backticked names in the first column of the first table under the heading line `heading` of `page`. */
function tableNames(page: string, heading: string): string[] {
  const markdown = read(page);
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, `${page} has a "${heading}" heading`).toBeGreaterThan(-1);
  const section = markdown.slice(start + heading.length + 2);
  const end = section.search(/\n#{2,3} /);
  const names: string[] = [];
  for (const line of (end >= 0 ? section.slice(0, end) : section).split("\n")) {
    const firstCell = /^\| (`[^|]+) \|/.exec(line)?.[1];
    if (!firstCell) continue;
    for (const match of firstCell.matchAll(/`([A-Za-z_]+)`/g)) names.push(match[1]!);
  }
  return names;
}

const programs = new Map<string, ts.Program>();

function programFor(entryFile: string): ts.Program {
  let program = programs.get(entryFile);
  program ??= ts.createProgram([join(root, entryFile)], {
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    noEmit: true
  });
  programs.set(entryFile, program);
  return program;
}

/** The names an entry of the library exports. */
function exportNames(entryFile: string): string[] {
  const program = programFor(entryFile);
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(join(root, entryFile))!;
  return checker.getExportsOfModule(checker.getSymbolAtLocation(entry)!).map((symbol) => symbol.name);
}

/** The property names of an interface an entry of the library exports, inherited ones included. */
function propertiesOf(typeName: string, entryFile = "src/index.ts"): string[] {
  const program = programFor(entryFile);
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(join(root, entryFile))!;
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(entry)!).find((s) => s.name === typeName);
  expect(symbol, `${entryFile} exports ${typeName}`).toBeDefined();
  const type = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(symbol!));
  return checker.getPropertiesOfType(type).map((property) => property.name);
}

describe("the reference tables", () => {
  it("useAgentChat's Options tables (current, then deprecated and ignored) list exactly the members of UseAgentChatOptions", () => {
    const page = "docs/api/use-agent-chat.md";
    const names = [...tableNames(page, "## Options"), ...tableNames(page, "### Deprecated and ignored options")];
    expect(names.toSorted()).toEqual(propertiesOf("UseAgentChatOptions").toSorted());
  }, 60_000);

  it("useAgentChat's Returns tables (current, then deprecated) list exactly the members of UseAgentChatReturn", () => {
    const page = "docs/api/use-agent-chat.md";
    const names = [...tableNames(page, "## Returns"), ...tableNames(page, "### Deprecated")];
    expect(names.toSorted()).toEqual(propertiesOf("UseAgentChatReturn").toSorted());
  }, 60_000);

  it.each([
    ["docs/api/use-agent.md", "## Options", "UseAgentOptions", "src/index.ts"],
    ["docs/api/use-agent.md", "## Returns", "UseAgentReturn", "src/index.ts"],
    ["docs/api/use-agent-tool-events.md", "## Options", "UseAgentToolEventsOptions", "src/index.ts"],
    ["docs/api/use-agent-tool-events.md", "## Returns", "UseAgentToolEventsReturn", "src/index.ts"],
    ["docs/api/voice.md", "### Options", "UseVoiceAgentOptions", "src/voice/index.ts"],
    ["docs/api/voice.md", "### Returns", "UseVoiceAgentReturn", "src/voice/index.ts"],
    ["docs/api/voice.md", "### Options {#voice-input-options}", "UseVoiceInputOptions", "src/voice/index.ts"],
    ["docs/api/voice.md", "### Returns {#voice-input-returns}", "UseVoiceInputReturn", "src/voice/index.ts"]
  ])("%s, %s, lists exactly the members of %s", (page, heading, typeName, entryFile) => {
    expect(tableNames(page, heading).toSorted()).toEqual(propertiesOf(typeName, entryFile).toSorted());
  }, 60_000);
});

describe("the API reference", () => {
  /** Per entry (the page's `entry` frontmatter), the exports its pages give a heading: `### \`name\``. */
  function documented(): Map<string, string[]> {
    const byEntry = new Map<string, string[]>();
    for (const page of pages(join(docsDir, "api"))) {
      const markdown = read(page);
      const entry = /^---\n[\s\S]*?^entry: (\S+)$[\s\S]*?^---$/m.exec(markdown)?.[1];
      if (!entry) continue;
      const names = [...markdown.matchAll(/^#{2,4} `([A-Za-z_$][\w$]*)`\s*$/gm)].map((match) => match[1]!);
      byEntry.set(entry, [...(byEntry.get(entry) ?? []), ...names]);
    }
    return byEntry;
  }

  const manifest = JSON.parse(read("package.json")) as { exports: Record<string, { types?: string }> };
  /** The package's entries (package.json `exports`) and the source each is built from. */
  const entries = Object.keys(manifest.exports)
    .filter((key) => key !== "./package.json")
    .map((key) => {
      const name = key === "." ? "agents-vue" : `agents-vue/${key.slice(2)}`;
      const source = key === "." ? "src/index.ts" : `src/${key.slice(2)}/index.ts`;
      return [name, source] as const;
    });

  it("covers every entry of package.json", () => {
    expect([...documented().keys()].toSorted()).toEqual(entries.map(([name]) => name).toSorted());
    expect(entries.length).toBe(6);
  });

  it.each(entries)("gives every export of %s a heading, once, and names nothing else", (entry, source) => {
    const names = documented().get(entry) ?? [];
    const duplicates = names.filter((name, index) => names.indexOf(name) !== index);
    expect(duplicates, `${entry}: exports with two headings`).toEqual([]);
    const exported = exportNames(source);
    expect(
      exported.filter((name) => !names.includes(name)),
      `${entry}: exports missing from the reference (give each a heading \`### \\\`name\\\`\` on a page with "entry: ${entry}")`
    ).toEqual([]);
    expect(names.filter((name) => !exported.includes(name)), `${entry}: headings that name no export`).toEqual([]);
  }, 60_000);
});

/** The fenced `ts` and `vue` blocks of a markdown file (a code group's `[label]` allowed). */
function codeBlocks(markdown: string): { lang: "ts" | "vue"; code: string }[] {
  return [...markdown.matchAll(/^```(ts|vue)(?: \[[^\]\n]*\])?\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1] as "ts" | "vue", code: match[2]! }));
}

describe("the documented examples", () => {
  it("the README is a front door: at most 200 lines", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(200);
  });

  it("the README's component and Getting started's first chat are the components a browser test runs, as written", () => {
    const readme = codeBlocks(read("README.md")).filter((block) => block.lang === "vue");
    expect(readme[0]?.code).toBe(read("test/fixtures/docs/ReadmeChat.vue"));
    const firstChat = codeBlocks(read("docs/guide/getting-started.md")).find((block) => block.lang === "vue");
    expect(firstChat?.code).toBe(read("test/fixtures/docs/FirstChat.vue"));
  });
});

/**
 * What the recipes' apps provide that the library does not: Nuxt's `<ClientOnly>`
 * and `useAsyncData`, components of the app, and the files `ai-elements-vue add`
 * copies into a project.
 */
const GLOBALS = `import type { Component, Ref } from "vue";
declare module "vue" {
  export interface GlobalComponents { ClientOnly: Component; ChatComponent: Component }
}
declare global {
  function useAsyncData<T>(key: string, handler: () => Promise<T>): Promise<{ data: Ref<T | undefined> }>;
}
export {};
`;
/** Ambient module declarations, so in a file with no imports of its own. */
const AI_ELEMENTS = `declare module "@/chat-persistence" {
  export const persist: import("agents-vue/persist").WipeableChatPersistence;
}
declare module "@/components/Chat.vue" {
  const Chat: import("vue").DefineComponent<{ agent: import("agents-vue").SharedAgentConnection }>;
  export default Chat;
}
declare module "@/components/Counter.vue" {
  const Counter: import("vue").DefineComponent;
  export default Counter;
}
declare module "@vue/test-utils" {
  // Not installed in this repository: the part of its API the Testing guide uses (a loose stand-in of its types).
  interface DOMWrapper {
    text(): string;
    setValue(value: unknown): Promise<void>;
    trigger(event: string): Promise<void>;
  }
  interface VueWrapper {
    get(selector: string): DOMWrapper;
    findAll(selector: string): DOMWrapper[];
    unmount(): void;
  }
  export function mount(component: import("vue").Component, options?: { props?: Record<string, unknown> }): VueWrapper;
}
declare module "@/components/ai-elements/conversation" {
  export const Conversation: import("vue").Component, ConversationContent: import("vue").Component, ConversationScrollButton: import("vue").Component;
}
declare module "@/components/ai-elements/message" {
  export const Message: import("vue").Component, MessageContent: import("vue").Component, MessageResponse: import("vue").Component;
}
declare module "@/components/ai-elements/prompt-input" {
  export const PromptInput: import("vue").Component, PromptInputFooter: import("vue").Component, PromptInputSubmit: import("vue").Component, PromptInputTextarea: import("vue").Component;
  export interface PromptInputMessage { text?: string; files?: File[] }
}
`;

describe("code blocks of the README and the site", () => {
  it("typecheck against the library (vue-tsc)", () => {
    const sources = ["README.md", ...pages()];
    const blocks = sources.flatMap((source) => codeBlocks(read(source)).map((block) => ({ ...block, source })));
    expect(blocks.length).toBeGreaterThanOrEqual(35);
    for (const source of ["README.md", "docs/guide/getting-started.md", "docs/guide/testing.md", "docs/guide/exact-sync.md"]) {
      expect(blocks.some((block) => block.source === source), `${source} has code blocks`).toBe(true);
    }
    // Inside the repo, so packages resolve from its node_modules.
    const dir = join(root, "test", `.docs-check-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const files: string[] = [];
    const origins = new Map<string, string>();
    blocks.forEach((block, index) => {
      const worker = /@cloudflare\/(ai-chat|think)|agents-vue\/server/.test(block.code);
      // Worker examples get the workers types and an Env with Workers AI's binding, as a worker project has (wrangler types).
      const preamble = worker ? '/// <reference types="@cloudflare/workers-types" />\ninterface Env { AI: Ai }\n' : "";
      const name = `block-${index}.${block.lang === "vue" ? "vue" : "ts"}`;
      writeFileSync(join(dir, name), block.lang === "ts" ? `${preamble}${block.code}\nexport {};\n` : block.code);
      files.push(join(dir, name));
      origins.set(name, block.source);
    });
    writeFileSync(join(dir, "components.d.ts"), GLOBALS);
    writeFileSync(join(dir, "ai-elements.d.ts"), AI_ELEMENTS);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "Bundler",
          lib: ["ES2023", "DOM", "DOM.Iterable"],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          types: [],
          paths: {
            "agents-vue": [join(root, "src/index.ts")],
            "agents-vue/server": [join(root, "src/server/index.ts")],
            "agents-vue/voice": [join(root, "src/voice/index.ts")],
            "agents-vue/wire": [join(root, "src/wire/index.ts")],
            "agents-vue/persist": [join(root, "src/persist/index.ts")],
            "agents-vue/testing": [join(root, "src/testing/index.ts")]
          }
        },
        files: [...files, join(dir, "components.d.ts"), join(dir, "ai-elements.d.ts")]
      })
    );
    let output = "";
    try {
      execFileSync(process.execPath, [join(root, "node_modules/vue-tsc/bin/vue-tsc.js"), "--noEmit", "-p", join(dir, "tsconfig.json")], {
        cwd: root,
        encoding: "utf8",
        stdio: "pipe"
      });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    // Each problem names the page its block comes from.
    const problems = output.replace(/(?:[^\s(]*[\\/])?\.docs-check-\d+[\\/](block-\d+\.(?:ts|vue))/g, (_, name: string) => `${origins.get(name) ?? "?"} (${name})`);
    rmSync(dir, { recursive: true, force: true });
    expect(problems, `code blocks must typecheck:\n${problems}`).toBe("");
  }, 180_000);
});
