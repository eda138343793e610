import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { OperationsOf } from "~/.server/admin/http/operation-table";
import type { UnitOfWork } from "~/.server/context";
import type { JobPayloads } from "~/.server/jobs/queue";
import { findingsOf, proseFiles, repositoryFiles } from "./support/comments";
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
    { name: "the job queue imports a feature's handler", file: "app/.server/jobs/probe.ts", code: 'import { sendMagicLinkJob } from "../sign-in/magic-link-request";\nexport const x = sendMagicLinkJob;\n', says: /job queue knows no feature/ },
    { name: "the job queue imports a feature's type", file: "app/.server/jobs/probe.ts", code: 'import type { LogoutNotice } from "~/.server/oidc/features/backchannel-logout";\nexport type X = LogoutNotice;\n', says: /job queue knows no feature/ },
    { name: "the job queue imports the services or the context", file: "app/.server/jobs/probe.ts", code: 'import type { Services } from "../services";\nimport type { Db } from "../context";\nexport type X = [Services, Db];\n', says: /job queue knows no feature/ },
    { name: "the job queue imports the job table", file: "app/.server/jobs/probe.ts", code: 'import { JOB_TABLE } from "../job-table";\nexport const x = JOB_TABLE;\n', says: /job queue knows no feature/ },
    { name: "a sign-in method imports another method", file: "app/.server/sign-in/methods/probe.ts", code: 'import { totp } from "./totp";\nexport const x = totp;\n', says: /never imports another method nor the flow/ },
    { name: "a sign-in method imports the flow", file: "app/.server/sign-in/methods/probe.ts", code: 'import { FIRST_FACTORS } from "../flow";\nexport const x = FIRST_FACTORS;\n', says: /never imports another method nor the flow/ },
    { name: "a service imports the Services bag (a type import too)", file: "app/.server/admin/users/probe.ts", code: 'import type { Services } from "../../services";\nexport type X = Services;\n', says: /Only doors and the composition root see the Services bag/ },
    { name: "a sign-in method imports the Services bag", file: "app/.server/sign-in/methods/probe.ts", code: 'import type { Services } from "~/.server/services";\nexport type X = Services;\n', says: /Only doors and the composition root see the Services bag/ },
    { name: "an Admin API operation imports the Services bag", file: "app/.server/admin/operations/probe.ts", code: 'import type { Services } from "../../services";\nexport type X = Services;\n', says: /Only doors and the composition root see the Services bag/ },
    { name: "the outbound guard imports a feature", file: "app/.server/outbound/probe.ts", code: 'import { sendWebhook } from "../webhooks/send";\nexport const x = sendWebhook;\n', says: /outbound guard imports nothing of Porta's/ },
  ];

  it.each(forbidden)("refuses: $name", async ({ file, code, says }) => {
    const problems = await problemsOf(file, code);
    expect(problems.some((p) => says.test(p)), problems.join("\n")).toBe(true);
  });

  it("accepts the allowed direction: a route calling a service, a service using the database, a door seeing the Services bag", async () => {
    expect(await problemsOf("app/routes/console.probe.tsx", 'import { readForm } from "~/.server/http/form";\nexport const x = readForm;\n')).toEqual([]);
    expect(await problemsOf("app/.server/admin/users/probe.ts", 'import type { Db } from "../../context";\nexport type X = Db;\n')).toEqual([]);
    expect(await problemsOf("app/.server/sign-in/methods/probe.ts", 'import { secondFactorLimits } from "../code-factor";\nexport const x = secondFactorLimits;\n')).toEqual([]);
    // The doors and the composition root build contexts from the Services bag; tests beside the code may build services.
    expect(await problemsOf("app/routes/console.probe.tsx", 'import type { Services } from "~/.server/services";\nexport type X = Services;\n')).toEqual([]);
    expect(await problemsOf("app/.server/sign-in/door.ts", 'import type { Services } from "../services";\nexport type X = Services;\n')).toEqual([]);
    expect(await problemsOf("app/.server/job-table.ts", 'import type { Services } from "./services";\nexport type X = Services;\n')).toEqual([]);
    expect(await problemsOf("app/.server/auth/probe.test.ts", 'import type { Services } from "../services";\nexport type X = Services;\n')).toEqual([]);
    expect(await problemsOf("app/.server/jobs/probe.ts", 'import type { Database } from "../db/client";\nimport { decideRetry } from "./schedule";\nexport const x = decideRetry;\nexport type X = Database;\n')).toEqual([]);
  });
});

describe("the Services bag", () => {
  it("is taken whole only by the load context, the composition root and the doors that build contexts from it; every other function names what it touches", () => {
    const files = readdirSync(path.join(ROOT, "app"), { recursive: true, encoding: "utf8" })
      .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file) && !file.startsWith("generated/"))
      .filter((file) => /:\s*Services\b/.test(readFileSync(path.join(ROOT, "app", file), "utf8")));
    expect(files.map((file) => `app/${file}`).sort()).toEqual([
      "app/.server/http/app.ts",
      "app/.server/registration/routes.ts",
      "app/.server/scim/routes.ts",
      "app/.server/services.ts",
      "app/.server/sign-in/door.ts",
      "app/.server/ssf/routes.ts",
      "app/.server/start.ts",
      "app/load-context.ts",
    ]);
  });
});

describe("import circles", () => {
  it("has none in app/, counting type imports (a service's context names its collaborators without importing the Services bag)", () => {
    const found = cycles(importGraph(ROOT, ["app"], { types: true }));
    expect(found.map((cycle) => cycle.map((file) => path.relative(ROOT, file)))).toEqual([]);
  });

  it("has none through the job queue, counting type imports; the queue's files import only the queue, the database layer and packages", () => {
    const graph = importGraph(ROOT, ["app"], { types: true });
    const inJobs = (file: string) => path.relative(ROOT, file).startsWith("app/.server/jobs/");
    const throughJobs = cycles(graph).filter((cycle) => cycle.some(inJobs));
    expect(throughJobs.map((cycle) => cycle.map((file) => path.relative(ROOT, file)))).toEqual([]);
    const jobFiles = [...graph.keys()].filter(inJobs);
    expect(jobFiles.map((file) => path.relative(ROOT, file))).toContain("app/.server/jobs/queue.ts");
    for (const file of jobFiles) {
      const outside = graph.get(file)!.map((target) => path.relative(ROOT, target)).filter((target) => !/^app\/(\.server\/(jobs|db)\/|generated\/)/.test(target));
      expect(outside, path.relative(ROOT, file)).toEqual([]);
    }
  });
});

describe("recipe: add a job (docs/architecture.md)", () => {
  it("the queue works every job of the table, and enqueueing is typed from each job's payload schema", async () => {
    const { JOB_TABLE } = await import("~/.server/job-table");
    const names = JOB_TABLE.map((job) => job.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(["audit-stream", "backchannel-logout", "domain-recheck", "email-change", "email-change-notice", "email-otp", "invitation", "magic-link", "password-reset", "saml-metadata-refresh", "ssf-push", "webhook"]);
    for (const job of JOB_TABLE) expect(typeof job.payload.safeParse, job.name).toBe("function");

    // Checked by tsc: a payload that does not fit its job's schema, or a job nobody defined, does not compile.
    expectTypeOf<JobPayloads["webhook"]>().toEqualTypeOf<{ deliveryId: string }>();
    expectTypeOf<JobPayloads["backchannel-logout"]>().toEqualTypeOf<{ organizationId: string; clientId: string; sub: string; sid: string | null }>();
    const enqueueLikeAService = (ctx: UnitOfWork) => {
      void ctx.enqueue("invitation", { invitationId: "i", language: "en" });
      // @ts-expect-error an invitation needs its language
      void ctx.enqueue("invitation", { invitationId: "i" });
      // @ts-expect-error no feature defined this job
      void ctx.enqueue("no-such-job", {});
    };
    expect(typeof enqueueLikeAService).toBe("function");
  });
});

describe("recipes (docs/architecture.md)", () => {
  // Loading the whole operation table (or migrating a database) takes a while on a busy machine.
  const SLOW = { timeout: 180_000 };

  it("add an Admin API resource: every module in operations/ is in the table, and a module added to it gets its route, OpenAPI entry and typed id", SLOW, async () => {
    const { MODULES, operationsOf } = await import("~/.server/admin/http/operation-table");
    const files = readdirSync(path.join(ROOT, "app/.server/admin/operations")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    const camel = (file: string) => file.replace(/\.ts$/, "").replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    expect(files.map(camel).sort()).toEqual(Object.keys(MODULES).sort());

    const { operation } = await import("~/.server/admin/http/route");
    const probe = {
      probeOperations: [
        operation({
          method: "GET",
          path: "/probes/{id}",
          operationId: "probes.get",
          summary: "Read a probe",
          tag: "Probes",
          permission: "authenticated",
          params: z.object({ id: z.string() }),
          response: z.object({ id: z.string() }),
          handler: async ({ params }) => ({ body: { id: params.id } }),
        }),
      ],
    };
    const operations = operationsOf({ ...MODULES, probe });
    const { createRouter } = await import("~/.server/admin/http/router");
    const match = createRouter(operations).match("GET", ["probes", "p1"]);
    expect(match.kind === "found" && match.op.operationId).toBe("probes.get");
    expect(match.kind === "found" && match.params).toEqual({ id: "p1" });

    const { buildOpenApiDocument } = await import("~/.server/admin/http/openapi");
    const document = buildOpenApiDocument("http://localhost", undefined, operations);
    expect(document.paths["/api/admin/probes/{id}"]?.get).toMatchObject({ operationId: "probes.get", tags: ["Probes"] });

    // The console's typed calls read operation ids from the same table, by type.
    type ProbeId = OperationsOf<typeof probe>["operationId"];
    expectTypeOf<ProbeId>().toEqualTypeOf<"probes.get">();
  });

  it("add a login method: the SQL CHECK constraints allow exactly LOGIN_METHODS", SLOW, async () => {
    const { LOGIN_METHODS } = await import("~/schemas/login-methods");
    const { openMigratedDatabase } = await import("./support/migrated-database");
    const database = await openMigratedDatabase();
    try {
      const { rows } = await database.db.executeSql(
        `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname IN ('Organization_defaultLoginMethods_check', 'Client_loginMethods_check') ORDER BY conname`,
      );
      const constraints = rows as Array<{ conname: string; def: string }>;
      expect(constraints.map((c) => c.conname)).toEqual(["Client_loginMethods_check", "Organization_defaultLoginMethods_check"]);
      for (const { conname, def } of constraints) {
        const allowed = /ARRAY\[(.*?)\]/.exec(def)?.[1]?.match(/'([^']+)'/g)?.map((quoted) => quoted.slice(1, -1));
        expect(allowed, conname).toEqual([...LOGIN_METHODS]);
      }
    } finally {
      await database.dispose();
    }
  });

  it("add a login method: each module in sign-in/methods/ is one method of the flow's tables, with its unit test beside it", SLOW, async () => {
    const { FIRST_FACTORS, SECOND_FACTORS } = await import("~/.server/sign-in/flow");
    const { LOGIN_METHODS } = await import("~/schemas/login-methods");
    const folder = path.join(ROOT, "app/.server/sign-in/methods");
    const files = readdirSync(folder);
    const modules = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    const tabled: unknown[] = [...Object.values(FIRST_FACTORS), ...Object.values(SECOND_FACTORS)];
    const found: unknown[] = [];
    for (const file of modules) {
      expect(files, `${file} has its unit test`).toContain(file.replace(/\.ts$/, ".test.ts"));
      const exported = Object.values((await import(/* @vite-ignore */ path.join(folder, file))) as Record<string, unknown>);
      const methods = exported.filter((value) => typeof value === "object" && value !== null && "kind" in value && (value.kind === "first" || value.kind === "second"));
      expect(methods, `${file} declares exactly one method`).toHaveLength(1);
      expect(tabled, `${file}'s method is in the flow's tables`).toContain(methods[0]);
      found.push(methods[0]);
    }
    expect(found).toHaveLength(tabled.length);
    // Every login method an organization or client can enable has its first factor.
    expect(Object.keys(FIRST_FACTORS).sort()).toEqual([...LOGIN_METHODS].sort());
    for (const [name, method] of Object.entries(FIRST_FACTORS)) expect(method.method).toBe(name);
  });

  it("audit events: the documented catalogue is the one the writer accepts", async () => {
    const { AUDIT_EVENTS } = await import("~/schemas/audit-events");
    const documented = readFileSync(path.join(ROOT, "docs/audit-events.md"), "utf8")
      .split("\n")
      .map((line) => /^\| `([^`]+)` \| (.*) \|$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], m[2]]);
    expect(documented).toEqual(Object.entries(AUDIT_EVENTS));
  });
});

describe("recipe: change a rate limit", () => {
  it("limiters follow the rule their configuration entry holds at the time of each attempt", { timeout: 180_000 }, async () => {
    const { createRateLimits, DEFAULT_LIMITS } = await import("~/.server/rate-limit/limiters");
    const { openMigratedDatabase } = await import("./support/migrated-database");
    const database = await openMigratedDatabase();
    try {
      let magicLink = { points: 2, durationSeconds: 60 };
      const limits = createRateLimits(database.db, async (name) => (name === "magicLink" ? magicLink : DEFAULT_LIMITS[name]));
      expect((await limits.consume("magicLink", "a@example.test")).allowed).toBe(true);
      expect((await limits.consume("magicLink", "a@example.test")).allowed).toBe(true);
      const third = await limits.consume("magicLink", "a@example.test");
      expect(third.allowed).toBe(false);
      expect(!third.allowed && third.retryAfterSeconds).toBeGreaterThan(0);
      expect(!third.allowed && third.retryAfterSeconds).toBeLessThanOrEqual(60);
      // A raised rule counts the attempts made so far and admits the rest.
      magicLink = { points: 4, durationSeconds: 60 };
      expect((await limits.consume("magicLink", "a@example.test")).allowed).toBe(true);
      expect((await limits.consume("magicLink", "a@example.test")).allowed).toBe(false);
    } finally {
      await database.dispose();
    }
  });
});

describe("comments say why in terms of this repository", () => {
  const repository = repositoryFiles(ROOT);
  const problems = (file: string, text: string) => findingsOf(file, text, repository).map((f) => f.problem);

  // TypeScript parses every source file: several seconds, more on a busy machine.
  it("no comment or test title names an issue number, a file the repository does not have, or a document kept outside it (history goes to docs/decisions/)", { timeout: 180_000 }, () => {
    const findings = proseFiles(ROOT).flatMap((file) => findingsOf(file, readFileSync(path.join(ROOT, file), "utf8"), repository));
    expect(findings.map((f) => `${f.where}: ${f.problem}: ${f.says}`)).toEqual([]);
  });

  it("finds each kind in a planted file, and lets through what a maintainer can follow", () => {
    const planted = [
      "// Kept as in issue 17 item 6 (stop 32, #12): see app/routes/$slug.login.tsx and STACK-NOTES §3.",
      "/** api.admin.users_.$id */",
      'describe("the login page (issue 19)", () => {',
      '  it("renders ./no-such-helper.ts from app/.server/no-such-folder", () => {});',
      "});",
    ].join("\n");
    expect(problems("app/.server/probe.ts", planted)).toEqual([
      'names "issue 17" of a tracker outside the repository',
      'names "STACK-NOTES", a document outside the repository',
      "names app/routes/$slug.login.tsx, which the repository does not have",
      "names the route api.admin.users_.$id, which app/routes does not have",
      'names "issue 19" of a tracker outside the repository',
      "names ./no-such-helper.ts, which the repository does not have",
      "names app/.server/no-such-folder, which the repository does not have",
    ]);
    const followable = [
      "// The layers of docs/architecture.md (decision 020; the one route is routes/api.admin.$.ts, its table",
      "// admin/http/operation-table.ts, the lint rules in ~/../eslint.config.js and ./context.ts).",
      '// React error #345; remix-run/remix#10214; https://example.test/issues/7/x.ts; console.log("a.b");',
      "// Folders and modules from the top: app/.server/jobs, app/.server/jobs/queue, test/oidc/; built: packages/cli/dist/main.js.",
      'it("keeps a session for 30 days", () => {});',
    ].join("\n");
    expect(problems("app/.server/probe.ts", followable)).toEqual([]);
  });
});
