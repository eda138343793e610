import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { FEATURES, type Feature } from "./features";

/**
 * The layout of app/.server/oidc: every feature module is in FEATURES, and every change to a
 * built oidc-provider is applied from provider/patches.ts, so that what a feature changes is
 * read in its one module and nothing changes the provider unseen.
 */
const ROOT = path.resolve(__dirname, "../../..");
const FEATURES_DIR = path.join(__dirname, "features");
const PATCH_MODULE = "app/.server/oidc/provider/patches.ts";
/** Patches of another library than the provider, each the one place its library is changed. */
const OTHER_LIBRARY_PATCHES = new Set([
  // xml-crypto's signature-algorithm lookup, taught ECDSA for SAML (decision 081).
  "app/.server/federation/xml-ecdsa.ts",
]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      if (entry !== "generated" && entry !== "node_modules") sourceFiles(full, out);
    } else if (/\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry)) {
      out.push(path.relative(ROOT, full).split(path.sep).join("/"));
    }
  }
  return out;
}

/** A provider model, or its prototype, as a value to write into: `provider.Client.prototype`, `provider.AccessToken as …`. */
const PROVIDER_INTERNAL = /\.prototype\b|^\(*\s*provider\.[A-Z]\w*(?:\s+as\b|\s*\)|$)/;

interface PatchSite {
  line: number;
  text: string;
  node: ts.Node;
}

/**
 * Where `text` changes a provider: middleware or a grant type registered on it (`provider.use`,
 * `provider.registerGrantType`), a write into one of its models or their prototypes (directly, or
 * through a name bound to one), or a property defined on them. Listening to its events is not a
 * change.
 */
function patchSitesOf(file: string, text: string): PatchSite[] {
  return patchSitesIn(parse(file, text));
}

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);

function patchSitesIn(source: ts.SourceFile): PatchSite[] {
  const boundToInternals = new Set<string>();
  const bindings = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && PROVIDER_INTERNAL.test(node.initializer.getText(source))) {
      boundToInternals.add(node.name.text);
    }
    ts.forEachChild(node, bindings);
  };
  bindings(source);
  const rootOf = (node: ts.Expression): ts.Expression => {
    let current = node;
    while (ts.isPropertyAccessExpression(current) || ts.isElementAccessExpression(current) || ts.isParenthesizedExpression(current) || ts.isAsExpression(current)) current = current.expression;
    return current;
  };
  const sites: PatchSite[] = [];
  const add = (node: ts.Node) => sites.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.getText(source).split("\n")[0]!, node });
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const receiver = node.expression.expression.getText(source);
      if ((method === "use" || method === "registerGrantType") && /\bprovider\b/.test(receiver)) add(node);
      if (["Object.defineProperty", "Object.defineProperties", "Object.assign", "Object.setPrototypeOf", "Reflect.set"].includes(node.expression.getText(source))) {
        const target = node.arguments[0]?.getText(source) ?? "";
        if (/\bprovider\b|\.prototype\b/.test(target) || boundToInternals.has(target)) add(node);
      }
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))) {
      const target = node.left.expression.getText(source);
      const root = rootOf(node.left);
      if (PROVIDER_INTERNAL.test(target) || (ts.isIdentifier(root) && boundToInternals.has(root.text))) add(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

const topLevelStatementOf = (node: ts.Node): ts.Node => {
  let current = node;
  while (!ts.isSourceFile(current.parent)) current = current.parent;
  return current;
};

const insidePatchesList = (node: ts.Node): boolean => {
  for (let current: ts.Node | undefined = node; current; current = current.parent) {
    if (ts.isPropertyAssignment(current) && ts.isIdentifier(current.name) && current.name.text === "patches") return true;
  }
  return false;
};

/**
 * Where a feature module hands a patch to something other than its own `patches` list: the patch
 * is in an exported declaration, or a name declared around it is used outside `patches`.
 */
function patchesHandedOutOf(file: string, text: string): string[] {
  const source = parse(file, text);
  const problems: string[] = [];
  for (const site of patchSitesIn(source)) {
    if (insidePatchesList(site.node)) continue;
    const statement = topLevelStatementOf(site.node);
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (exported) problems.push(`${file}:${site.line}: a patch in an exported declaration`);
    const names = ts.isFunctionDeclaration(statement) && statement.name ? [statement.name.text] : ts.isVariableStatement(statement) ? statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : [])) : [];
    if (names.length === 0) problems.push(`${file}:${site.line}: a patch outside a named declaration`);
    const uses = (node: ts.Node) => {
      if (ts.isIdentifier(node) && names.includes(node.text) && topLevelStatementOf(node) !== statement && !insidePatchesList(node)) {
        problems.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${node.text} is applied outside its feature's patches`);
      }
      ts.forEachChild(node, uses);
    };
    uses(source);
  }
  return problems;
}

describe("the features of the provider", () => {
  const modules = readdirSync(FEATURES_DIR).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "index.ts");
  const featureModules = modules.filter((f) => !f.endsWith("-job.ts")).map((f) => f.slice(0, -3));

  it("lists every module in features/ once, under its module's name, and each exports its listed feature", async () => {
    expect(FEATURES.map((f) => f.name).sort()).toEqual([...featureModules].sort());
    for (const name of featureModules) {
      const exports = Object.values((await import(`./features/${name}.ts`)) as Record<string, unknown>);
      const listed = exports.filter((value): value is Feature => (FEATURES as readonly unknown[]).includes(value));
      expect(listed.map((f) => f.name), `features/${name}.ts`).toEqual([name]);
    }
  });

  it("keeps a feature's jobs beside it: each job module in features/ is named after a listed feature", () => {
    for (const job of modules.filter((f) => f.endsWith("-job.ts"))) expect(featureModules, job).toContain(job.slice(0, -"-job.ts".length));
  });

  it("applies every change to a provider from provider/patches.ts: patches live there or in a feature's own patches list", () => {
    const problems: string[] = [];
    for (const file of sourceFiles(path.join(ROOT, "app"))) {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      const inFeature = /^app\/\.server\/oidc\/features\/[^/]+\.ts$/.test(file);
      if (inFeature) problems.push(...patchesHandedOutOf(file, text));
      else if (file !== PATCH_MODULE && !OTHER_LIBRARY_PATCHES.has(file)) problems.push(...patchSitesOf(file, text).map((site) => `${file}:${site.line}: ${site.text}`));
      // Nothing but the patch module reads the features' patches (and so applies them).
      if (file !== PATCH_MODULE && /\.patches\b/.test(text)) problems.push(`${file}: reads a feature's patches`);
    }
    expect(problems).toEqual([]);
  });

  it("finds a planted patch of each kind, and lets through what only reads or listens", () => {
    const planted = [
      "const prototype = provider.Client.prototype as unknown as { x: () => void };",
      "prototype.x = () => undefined;",
      "const model = provider.AccessToken as unknown as { find: () => void };",
      "model.find = () => undefined;",
      "(provider.IdToken as unknown as { prototype: { issue: unknown } }).prototype.issue = null;",
      "provider.use(async (_ctx, next) => next());",
      "tenant.provider.registerGrantType('x', handler, []);",
      "Object.defineProperty(provider.Session.prototype, 'y', { value: 1 });",
    ].join("\n");
    expect(patchSitesOf("probe.ts", planted).map((s) => s.line)).toEqual([2, 4, 5, 6, 7, 8]);
    const harmless = [
      "provider.on('grant.success', () => undefined);",
      "const token = new provider.AccessToken({});",
      "token.resourceServer = undefined;",
      "provider.proxy = true;",
      "app.use(router);",
      "const session = await (provider.Session as unknown as { get(): unknown }).get();",
    ].join("\n");
    expect(patchSitesOf("probe.ts", harmless)).toEqual([]);
    const handedOut = [
      "function pollInterval(provider: Provider) { provider.use(mw); }",
      "export function exchange(provider: Provider) { provider.registerGrantType('x', h, []); }",
      "export const feature = { name: 'probe', patches: [pollInterval] };",
      "export const setUp = (provider: Provider) => pollInterval(provider);",
    ].join("\n");
    expect(patchesHandedOutOf("probe.ts", handedOut)).toEqual([
      "probe.ts:4: pollInterval is applied outside its feature's patches",
      "probe.ts:2: a patch in an exported declaration",
    ]);
  });
});
