/**
 * The API reference, generated from the library's type declarations and
 * their doc comments.
 *
 * A reference page names its package entry in its frontmatter
 * (`entry: agents-vue/server`) and gives each export a heading of its own
 * whose text is the export's name in backticks (`` ### `rebuild` ``). At
 * build time the markdown plugin below puts, under each such heading, the
 * export's declaration as TypeScript and its doc comment, read from the
 * source with the TypeScript compiler; a heading that names no export of the
 * entry fails the build. `test/unit/docs.test.ts` checks the other way: every
 * export of every entry has its heading.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { MarkdownRenderer } from "vitepress";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The package's entries and the source file each is built from. */
export const ENTRIES: Record<string, string> = {
  "agents-vue": "src/index.ts",
  "agents-vue/server": "src/server/index.ts",
  "agents-vue/voice": "src/voice/index.ts",
  "agents-vue/wire": "src/wire/index.ts",
  "agents-vue/persist": "src/persist/index.ts",
  "agents-vue/testing": "src/testing/index.ts"
};

let program: ts.Program | undefined;
function checker(): ts.TypeChecker {
  program ??= ts.createProgram(
    Object.values(ENTRIES).map((file) => join(ROOT, file)),
    {
      strict: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      noEmit: true,
      types: []
    }
  );
  return program.getTypeChecker();
}

/** The exported symbols of an entry, by name (aliases resolved). */
export function exportsOf(entry: string): Map<string, ts.Symbol> {
  const file = ENTRIES[entry];
  if (!file) throw new Error(`No package entry "${entry}" (known: ${Object.keys(ENTRIES).join(", ")})`);
  const types = checker();
  const source = program!.getSourceFile(join(ROOT, file));
  const module = source && types.getSymbolAtLocation(source);
  if (!module) throw new Error(`Cannot read the exports of ${file}`);
  return new Map(
    types.getExportsOfModule(module).map((symbol) => [symbol.name, symbol.flags & ts.SymbolFlags.Alias ? types.getAliasedSymbol(symbol) : symbol])
  );
}

/** Where a declaration comes from, for re-exports of other packages. */
function origin(declaration: ts.Declaration): string | undefined {
  const file = declaration.getSourceFile().fileName;
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match?.[1];
}

/** A declaration's text without its doc comment and body, its lines dedented. */
function textOf(node: ts.Node): string {
  const text = node.getText();
  const lines = text.split("\n");
  const indent = Math.min(...lines.slice(1).filter((line) => line.trim()).map((line) => line.match(/^ */)![0].length));
  return lines.map((line, index) => (index === 0 || !Number.isFinite(indent) ? line : line.slice(indent))).join("\n");
}

/** The first sentence of a doc comment, for member comments. */
function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/\.(\s|$)/);
  return end < 0 ? flat : flat.slice(0, end + 1);
}

function docOf(symbol: ts.Symbol): string {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker())).trim();
}

const isPrivate = (member: ts.Node) =>
  ts.canHaveModifiers(member) &&
  (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword || modifier.kind === ts.SyntaxKind.ProtectedKeyword);

/** The members of an interface or class, each with the first sentence of its doc comment. */
function membersOf(members: readonly ts.Node[]): string[] {
  const types = checker();
  const lines: string[] = [];
  for (const member of members) {
    const name = (member as { name?: ts.Node }).name;
    if (isPrivate(member) || (name && (ts.isPrivateIdentifier(name) || name.getText().startsWith("_")))) continue;
    if (ts.isClassStaticBlockDeclaration(member)) continue;
    const symbol = name ? types.getSymbolAtLocation(name) : undefined;
    const doc = symbol ? firstSentence(docOf(symbol)) : "";
    if (doc) lines.push(`  /** ${doc.replace(/\*\//g, "*\\/")} */`);
    lines.push(...textOf(member).replace(/\s*\{[\s\S]*\}\s*$/, (body) => (ts.isMethodDeclaration(member) ? ";" : body)).split("\n").map((line) => `  ${line}`));
  }
  return lines;
}

/** An interface's or class's first line: its name, type parameters and heritage. */
const headOf = (node: ts.InterfaceDeclaration | ts.ClassDeclaration) =>
  textOf(node)
    .slice(0, textOf(node).indexOf("{"))
    .replace(/^(export\s+)?(declare\s+)?/, "")
    .replace(/\s+/g, " ")
    .trim();

/** The declaration of an export as TypeScript a reader can scan: signatures, members, the type. */
export function declarationOf(name: string, symbol: ts.Symbol, options: { members: boolean }): string {
  const types = checker();
  const declarations = symbol.declarations ?? [];
  const first = declarations[0];
  if (!first) return `declare const ${name}: unknown;`;
  if (ts.isFunctionDeclaration(first)) {
    const overloads = declarations.filter(ts.isFunctionDeclaration);
    const shown = overloads.length > 1 ? overloads.filter((declaration) => !declaration.body) : overloads;
    return shown
      .map((declaration) => {
        const parameters = declaration.parameters
          .map((parameter) => {
            const optional = parameter.questionToken || parameter.initializer ? "?" : "";
            const type = parameter.type?.getText() ?? types.typeToString(types.getTypeAtLocation(parameter));
            return `${parameter.dotDotDotToken ? "..." : ""}${parameter.name.getText()}${optional}: ${type}`;
          })
          .join(", ");
        const generics = declaration.typeParameters ? `<${declaration.typeParameters.map((parameter) => parameter.getText()).join(", ")}>` : "";
        const returns = declaration.type?.getText() ?? types.typeToString(types.getSignatureFromDeclaration(declaration)!.getReturnType());
        return `function ${name}${generics}(${parameters}): ${returns};`;
      })
      .join("\n");
  }
  if (ts.isInterfaceDeclaration(first)) {
    const head = headOf(first);
    if (!options.members) return `${head} { … }`;
    return [`${head} {`, ...membersOf(first.members), "}"].join("\n");
  }
  if (ts.isClassDeclaration(first)) {
    const head = headOf(first);
    if (!options.members) return `${head} { … }`;
    return [`${head} {`, ...membersOf(first.members), "}"].join("\n");
  }
  if (ts.isTypeAliasDeclaration(first)) return textOf(first).replace(/^(export\s+)?(declare\s+)?/, "");
  if (ts.isVariableDeclaration(first)) {
    const initializer = first.initializer;
    if (initializer && (ts.isStringLiteral(initializer) || ts.isNumericLiteral(initializer))) return `const ${name} = ${initializer.getText()};`;
    return `const ${name}: ${first.type?.getText() ?? types.typeToString(types.getTypeOfSymbol(symbol))};`;
  }
  return `declare const ${name}: ${types.typeToString(types.getTypeOfSymbol(symbol))};`;
}

/** `{@link name}` and `{@link name text}` as code. */
const plainLinks = (text: string) => text.replace(/\{@link(?:code|plain)?\s+([^\s}|]+)(?:[\s|]+([^}]*))?\}/g, (_, target: string, label?: string) => (label?.trim() ? label.trim() : `\`${target}\``));

/**
 * Doc comment text as markdown that Vue can compile: angle brackets and
 * mustaches outside code (`Promise<T>` in prose) are escaped, code spans and
 * fences are left alone.
 */
function safeMarkdown(text: string): string {
  return text
    .split(/(```[\s\S]*?```|`[^`\n]*`)/g)
    .map((piece, index) => (index % 2 === 1 ? piece : piece.replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\{\{/g, "&#123;&#123;")))
    .join("");
}

/** The markdown generated under an export's heading. */
export function referenceOf(entry: string, name: string, options: { members: boolean }): string {
  const symbol = exportsOf(entry).get(name);
  if (!symbol) throw new Error(`The API reference names ${name}, which ${entry} does not export.`);
  const first = symbol.declarations?.[0];
  const from = first && origin(first);
  const parts = ["```ts", declarationOf(name, symbol, options), "```"];
  const doc = safeMarkdown(plainLinks(docOf(symbol)));
  if (doc) parts.push("", doc);
  const deprecated = symbol.getJsDocTags(checker()).find((tag) => tag.name === "deprecated");
  if (deprecated) parts.push("", `::: warning Deprecated\n${safeMarkdown(plainLinks(ts.displayPartsToString(deprecated.text))) || "Deprecated."}\n:::`);
  if (from) parts.push("", `<p class="api-origin">Re-exported from <code>${from}</code>.</p>`);
  return parts.join("\n");
}

/** The export a heading names: its whole source text is the name in backticks. */
function exportHeading(tokens: readonly { type: string; content: string }[], index: number): string | undefined {
  if (tokens[index]?.type !== "heading_open") return undefined;
  return /^`([A-Za-z_$][\w$]*)`$/.exec(tokens[index + 1]?.content ?? "")?.[1];
}

/**
 * The markdown-it plugin: on a page with `entry` in its frontmatter, each
 * heading that names an export gets the generated reference after it. An
 * HTML comment `<!-- api: summary -->` right after the heading leaves out
 * the members (for interfaces a table on the page already lists).
 */
export function apiReference(md: MarkdownRenderer): void {
  md.core.ruler.push("agents_vue_api_reference", (state) => {
    const entry = (state.env as { frontmatter?: { entry?: unknown } }).frontmatter?.entry;
    if (typeof entry !== "string") return;
    const tokens = state.tokens;
    for (let index = tokens.length - 1; index >= 0; index--) {
      const name = exportHeading(tokens, index);
      if (!name) continue;
      let insertAt = index + 3;
      const next = tokens[insertAt];
      const summary = next?.type === "html_block" && /<!--\s*api:\s*summary\s*-->/.test(next.content);
      if (summary) insertAt++;
      const generated = md.parse(referenceOf(entry, name, { members: !summary }), { ...state.env, frontmatter: {} });
      tokens.splice(insertAt, 0, ...generated);
    }
  });
}
