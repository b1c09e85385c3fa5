/**
 * The README is part of the API: every option and return value of each
 * composable is in its tables (and nothing else is), and every code block in
 * it typechecks against the library's source.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The backticked names in the first column of the table under `heading` (up to the next heading). */
function tableNames(heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `README has a "${heading}" section`).toBeGreaterThan(-1);
  const section = readme.slice(start + heading.length + 2);
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

/** The property names of an interface an entry of the library exports, inherited ones included. */
function propertiesOf(typeName: string, entryFile = "src/index.ts"): string[] {
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
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(join(root, entryFile))!;
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(entry)!).find((s) => s.name === typeName);
  expect(symbol, `${entryFile} exports ${typeName}`).toBeDefined();
  const type = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(symbol!));
  return checker.getPropertiesOfType(type).map((property) => property.name);
}

describe("README tables", () => {
  it("the Options table lists exactly the options of useAgentChat", () => {
    expect(tableNames("## Options").toSorted()).toEqual(propertiesOf("UseAgentChatOptions").toSorted());
  }, 60_000);

  it("the Returns table lists exactly what useAgentChat returns", () => {
    expect(tableNames("## Returns").toSorted()).toEqual(propertiesOf("UseAgentChatReturn").toSorted());
  }, 60_000);

  it.each([
    ["### useAgent options", "UseAgentOptions", "src/index.ts"],
    ["### useAgent returns", "UseAgentReturn", "src/index.ts"],
    ["### useAgentToolEvents options", "UseAgentToolEventsOptions", "src/index.ts"],
    ["### useAgentToolEvents returns", "UseAgentToolEventsReturn", "src/index.ts"],
    ["### useVoiceAgent options", "UseVoiceAgentOptions", "src/voice/index.ts"],
    ["### useVoiceAgent returns", "UseVoiceAgentReturn", "src/voice/index.ts"],
    ["### useVoiceInput options", "UseVoiceInputOptions", "src/voice/index.ts"],
    ["### useVoiceInput returns", "UseVoiceInputReturn", "src/voice/index.ts"]
  ])("%s lists exactly the members of %s", (heading, typeName, entryFile) => {
    expect(tableNames(heading).toSorted()).toEqual(propertiesOf(typeName, entryFile).toSorted());
  }, 60_000);
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
  // Not installed in this repository: the part of its API the Testing section uses (a loose stand-in of its types).
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

describe("README code blocks", () => {
  it("typecheck against the library (vue-tsc)", () => {
    const blocks = [...readme.matchAll(/```(ts|vue)\n([\s\S]*?)```/g)].map((match) => ({
      lang: match[1] as "ts" | "vue",
      code: match[2]!
    }));
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    // Inside the repo, so packages resolve from its node_modules.
    const dir = join(root, "test", `.docs-check-${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const files: string[] = [];
    blocks.forEach((block, index) => {
      const worker = block.code.includes("@cloudflare/ai-chat") || block.code.includes("@cloudflare/think");
      // Worker examples get the workers types and an Env, as a worker project has.
      const preamble = worker ? '/// <reference types="@cloudflare/workers-types" />\ninterface Env {}\n' : "";
      const file = join(dir, `block-${index}.${block.lang === "vue" ? "vue" : "ts"}`);
      writeFileSync(file, block.lang === "ts" ? `${preamble}${block.code}\nexport {};\n` : block.code);
      files.push(file);
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
    const problems = output.replace(new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g"), "README");
    rmSync(dir, { recursive: true, force: true });
    expect(problems, `README code blocks must typecheck:\n${problems}`).toBe("");
  }, 120_000);
});
