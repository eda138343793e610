import path from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { cycles, importGraph } from "./support/import-graph";

/**
 * The layers of docs/architecture.md hold because the linter refuses what crosses them, and
 * the code has no import circles. Each forbidden import below is linted as if it sat in a real
 * file of the layer, so a rule that stopped working fails here.
 */
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function problemsOf(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

describe("layer boundaries enforced by the linter", () => {
  const forbidden: Array<{ name: string; file: string; code: string; says: RegExp }> = [
    { name: "a route imports another route", file: "app/routes/console.probe.tsx", code: 'import { loader } from "./console.keys";\nexport { loader };\n', says: /Routes never import other routes/ },
    { name: "a route reaches the database", file: "app/routes/console.probe.tsx", code: 'import { openDatabase } from "~/.server/db/client";\nexport const x = openDatabase;\n', says: /never reach the database/ },
    { name: "the database layer imports a service", file: "app/.server/db/probe.ts", code: 'import { listOrganizations } from "../admin/organizations/service";\nexport const x = listOrganizations;\n', says: /never imports the services above it/ },
    { name: "a service imports the Admin API's route helper", file: "app/.server/admin/users/probe.ts", code: 'import { runOperation } from "../http/route";\nexport const x = runOperation;\n', says: /Services never depend on the Admin API's HTTP layer/ },
    { name: "server code imports a component", file: "app/.server/auth/probe.ts", code: 'import { AuthCard } from "~/components/auth-card";\nexport const x = AuthCard;\n', says: /never imports routes or components/ },
    { name: "a component imports server code", file: "app/components/probe.tsx", code: 'import { createServices } from "~/.server/services";\nexport const x = createServices;\n', says: /never imports server code or routes/ },
  ];

  it.each(forbidden)("refuses: $name", async ({ file, code, says }) => {
    const problems = await problemsOf(file, code);
    expect(problems.some((p) => says.test(p)), problems.join("\n")).toBe(true);
  });

  it("accepts the allowed direction: a route calling a service, a service using the database", async () => {
    expect(await problemsOf("app/routes/console.probe.tsx", 'import { readForm } from "~/.server/http/form";\nexport const x = readForm;\n')).toEqual([]);
    expect(await problemsOf("app/.server/admin/users/probe.ts", 'import type { Db } from "../../context";\nexport type X = Db;\n')).toEqual([]);
  });
});

describe("import circles", () => {
  it("has none among the value imports of app/ (type-only imports are erased)", () => {
    const found = cycles(importGraph(ROOT, ["app"]));
    expect(found.map((cycle) => cycle.map((file) => path.relative(ROOT, file)))).toEqual([]);
  });
});
