import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The prose a maintainer reads beside the code: comments, and the titles of tests. It should
 * explain itself from this repository, so the architecture test reads it all and refuses what
 * a maintainer cannot follow: a number of an issue in some tracker, a file that is not here,
 * a document kept outside the repository. History belongs in docs/decisions/, which this does
 * not read.
 */

/** Folders and top-level files whose prose is read; paths are relative to the repository root. */
const SCOPE = ["app", "test", "e2e", "scripts", "bench", "emails", "packages", "prisma", "deploy", "docs"];
const SKIP_DIRS = new Set(["node_modules", "generated", "dist", "build", "decisions", ".cache", "coverage", "test-results", "playwright-report"]);
const CODE = /\.(?:tsx?|mts|cts|mjs|cjs|js)$/;
const HASH_COMMENTS = /(?:^Dockerfile$|\.(?:ya?ml|conf|sh|toml)$)/;
/**
 * The migrations already applied somewhere: their checksum is recorded, so their bytes never
 * change (decision 005) and their comments stay as written. A later migration is read, but only
 * for trackers and outside documents: a file it names may go later, and its bytes may not.
 */
const LAST_FROZEN_MIGRATION = "20261202051900_client_pkce";

export type Prose = { file: string; line: number; text: string };

function walk(root: string, dir: string, out: string[]): void {
  for (const name of readdirSync(path.join(root, dir))) {
    const relative = path.posix.join(dir, name);
    if (statSync(path.join(root, relative)).isDirectory()) {
      if (!SKIP_DIRS.has(name)) walk(root, relative, out);
    } else out.push(relative);
  }
}

/** Every file whose prose is read, relative to `root`. */
export function proseFiles(root: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(root)) {
    if (SCOPE.includes(entry)) walk(root, entry, out);
    else if (statSync(path.join(root, entry)).isFile() && (CODE.test(entry) || HASH_COMMENTS.test(entry))) out.push(entry);
  }
  return out.filter((file) => {
    const migration = /^prisma\/migrations\/([^/]+)\//.exec(file);
    return !(migration && migration[1]! <= LAST_FROZEN_MIGRATION);
  });
}

const TEST_CALL = /^(?:it|test|describe|suite|bench)\b/;

function codeProse(file: string, text: string): Prose[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found = new Map<number, string>();
  const comments = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) found.set(range.pos, text.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node) => {
    if (node.kind !== ts.SyntaxKind.JsxText) {
      comments(ts.getLeadingCommentRanges(text, node.pos));
      comments(ts.getTrailingCommentRanges(text, node.end));
    }
    if (ts.isCallExpression(node) && TEST_CALL.test(node.expression.getText(source))) {
      const title = node.arguments[0];
      if (title && (ts.isStringLiteral(title) || ts.isNoSubstitutionTemplateLiteral(title) || ts.isTemplateExpression(title))) {
        found.set(title.getStart(source), title.getText(source));
      }
    }
    // Tokens too (getChildren), so a comment before a closing brace or at the end of the file is read.
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found].map(([pos, body]) => ({ file, line: source.getLineAndCharacterOfPosition(pos).line + 1, text: body }));
}

function lineProse(file: string, text: string, comment: RegExp): Prose[] {
  const out: Prose[] = [];
  text.split("\n").forEach((line, index) => {
    const match = comment.exec(line);
    if (match) out.push({ file, line: index + 1, text: match[0] });
  });
  return out;
}

function blockProse(file: string, text: string): Prose[] {
  return [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((m) => ({ file, line: text.slice(0, m.index).split("\n").length, text: m[0] }));
}

/** The comments (and test titles) of one file; a Markdown document is all prose. */
export function proseOf(file: string, text: string): Prose[] {
  const name = path.posix.basename(file);
  if (CODE.test(name)) return codeProse(file, text);
  if (name.endsWith(".sql")) return [...lineProse(file, text, /--.*$/), ...blockProse(file, text)];
  if (name.endsWith(".prisma")) return lineProse(file, text, /\/\/.*$/);
  if (name.endsWith(".css")) return blockProse(file, text);
  if (name.endsWith(".tpl")) return [...lineProse(file, text, /(?:^|\s)#.*$/), ...[...text.matchAll(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g)].map((m) => ({ file, line: text.slice(0, m.index).split("\n").length, text: m[0] }))];
  if (HASH_COMMENTS.test(name)) return lineProse(file, text, /(?:^|\s)#.*$/);
  if (name.endsWith(".md")) return text.split("\n").map((line, index) => ({ file, line: index + 1, text: line }));
  return [];
}

/** A number in a tracker the repository does not hold: "issue" or "stop" with a number, "#" and a number, "item N of issue …". */
const TRACKER = /\bissues? #?\d+|\bstop \d+\b|\bitem \d+ of (?:the )?issue|(?<![\w/]|error )#\d{1,4}\b|\bsession \d+\b/i;
/** Documents kept beside the repository, not in it. */
const OUTSIDE = /STACK-NOTES|\bSTYLE\.md\b|\bDESIGN\b|shared\/spec|identity-service-spec|\.\.\/shared\b/;
/**
 * A mention of a file of this repository: a path with a folder and an extension, or a bare
 * file name of a kind the repository is made of. URLs and package paths are not mentions.
 */
const PATH = /(?<![\w@/.:~\]-])((?:\.{1,2}\/|~\/)?(?:[\w$.-]+\/)*[\w$-][\w$.-]*\.(?:tsx?|mts|mjs|cjs|sql|prisma|md|ya?ml))(?![\w/[-])/g;
/** A path from one of the repository's top folders, with or without an extension: a file or a folder. */
const FROM_TOP = /(?<![\w@/.:~$-])((?:app|test|e2e|scripts|bench|docs|packages|prisma|deploy|emails)\/[\w.$/-]*[\w$])(?![\w/-])/g;
/** Mentions with one of PATH's extensions are checked by PATH. */
const CHECKED_BY_PATH = /\.(?:tsx?|mts|mjs|cjs|sql|prisma|md|ya?ml)$/;
/** Build outputs and generated code are named in prose but not kept in the checkout. */
const BUILT = /(?:^|\/)(?:dist|build|generated)(?:\/|$)/;
/**
 * A route module named without its extension, as Remix's flat routes spell them: `routes/…`, or
 * a name with the marks of a nested path (`_.` or `.$`) such as `interaction.$uid_.consent`, or
 * any `api.admin.…` (the Admin API has one route module).
 */
const ROUTE = /(?<![\w@/.:~-])(?:routes\/([\w$.-]*[\w$])|((?:\$slug|interaction|console|api|dev)\.[\w$.-]*(?:_\.|\.\$)[\w$.-]*[\w$]|api\.admin\.[\w$.-]*[\w$]))(?![\w/-])/g;

export type Finding = { where: string; says: string; problem: string };

/** Every file of the checkout (not its dependencies, builds or reports), relative to `root`. */
export function repositoryFiles(root: string): Set<string> {
  const out: string[] = [];
  const walkAll = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir))) {
      if (OUTSIDE_CHECKOUT.has(name)) continue;
      const relative = dir ? path.posix.join(dir, name) : name;
      if (statSync(path.join(root, relative)).isDirectory()) walkAll(relative);
      else out.push(relative);
    }
  };
  walkAll("");
  return new Set(out);
}
const OUTSIDE_CHECKOUT = new Set([".git", "node_modules", "build", "dist", ".data", ".cache", "coverage", "test-results", "playwright-report", ".scratch"]);

/** What a maintainer could not follow in the prose of `file` (its path relative to the root), given the repository's files. */
export function findingsOf(file: string, text: string, repository: Set<string>): Finding[] {
  const tails = [...repository].map((known) => `/${known}`);
  const folders = new Set([...repository].flatMap((known) => known.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  const findings: Finding[] = [];
  for (const prose of proseOf(file, text)) {
    const where = `${file}:${prose.line}`;
    const says = prose.text.replace(/\s+/g, " ").slice(0, 160);
    const tracker = TRACKER.exec(prose.text);
    if (tracker) findings.push({ where, says, problem: `names "${tracker[0].trim()}" of a tracker outside the repository` });
    const outside = OUTSIDE.exec(prose.text);
    if (outside) findings.push({ where, says, problem: `names "${outside[0]}", a document outside the repository` });
    const bare = prose.text.replace(/\b[a-z][\w+.-]*:\/\/\S+/gi, "");
    if (file.startsWith("prisma/migrations/")) continue;
    for (const match of bare.matchAll(PATH)) {
      const mention = match[1]!;
      if (!outside?.[0] || !mention.includes(outside[0])) {
        if (!mentionExists(file, mention, repository, tails)) findings.push({ where, says, problem: `names ${mention}, which the repository does not have` });
      }
    }
    for (const match of bare.matchAll(FROM_TOP)) {
      const mention = match[1]!;
      if (BUILT.test(mention) || CHECKED_BY_PATH.test(mention)) continue;
      if (!["", ".ts", ".tsx", ".mjs", ".md", "/index.ts"].some((ext) => repository.has(mention + ext)) && !folders.has(mention)) {
        findings.push({ where, says, problem: `names ${mention}, which the repository does not have` });
      }
    }
    for (const match of bare.matchAll(ROUTE)) {
      const route = (match[1] ?? match[2]!).replace(/\.tsx?$/, "");
      if (!["", ".ts", ".tsx"].some((ext) => repository.has(`app/routes/${route}${ext}`))) findings.push({ where, says, problem: `names the route ${route}, which app/routes does not have` });
    }
  }
  return findings;
}

/** A mention resolves from the file's folder (`./`, `../`), from `app/` (`~/`), from the root, or as the tail of a file's path. */
function mentionExists(file: string, mention: string, repository: Set<string>, tails: string[]): boolean {
  if (mention.startsWith(".")) return repository.has(path.posix.normalize(path.posix.join(path.posix.dirname(file), mention)));
  if (mention.startsWith("~/")) return repository.has(`app/${mention.slice(2)}`);
  if (repository.has(mention)) return true;
  const tail = `/${mention}`;
  return tails.some((known) => known.endsWith(tail));
}
