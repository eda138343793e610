import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { dataFingerprint, PASSWORD, unique } from "../admin/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The bulk page's steps as its script takes them: the file is checked whole, kept in chunks of
 * ten rows for the session that uploaded it, and each chunk runs once through the Admin API, so
 * the page can count rows done. What a person sees is the same result per row as without a script.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let other: ConsoleVisit;
const OTHER = { email: "bulk-steps-admin@porta.test", password: PASSWORD };

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  const role = await prisma.role.findFirstOrThrow({ where: { organizationId: porta.bootstrap.organizationId, name: "service-admin" } });
  const user = await createUser(prisma, porta.bootstrap.organizationId, OTHER);
  await prisma.userRole.create({ data: { userId: user.id, roleId: role.id } });
  admin = await consoleSignIn(porta);
  other = await consoleSignIn(porta, OTHER);
});
afterAll(async () => {
  await porta?.stop();
});

interface Step {
  kind: string;
  token?: string;
  chunks?: number;
  total?: number;
  problem?: string;
  message?: string | null;
  problems?: Array<{ line: number | null; field: string; message: string }>;
  result?: { succeeded: number; failed: number; results: Array<{ index: number; op: string; status: string; user?: { email: string } }> };
}

async function organization() {
  return porta.services.db.prisma.organization.create({ data: { slug: unique("steps"), name: "Steps Org" } });
}

function stepsOf(visit: ConsoleVisit, orgId: string, csrf: string) {
  const url = `${porta.baseUrl}/console/organizations/${orgId}/bulk/run`;
  const cookie = visit.browser.cookieHeader(url);
  return {
    async stage(csv: string | null, mode: string): Promise<{ status: number; body: Step }> {
      const form = new FormData();
      form.set("csrf", csrf);
      form.set("intent", "stage");
      form.set("mode", mode);
      if (csv !== null) form.set("file", new Blob([csv], { type: "text/csv" }), "ops.csv");
      const res = await fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie } });
      return { status: res.status, body: (await res.json()) as Step };
    },
    async run(token: string, chunk: number, token2 = csrf): Promise<{ status: number; body: Step }> {
      const res = await fetch(url, { method: "POST", body: new URLSearchParams({ csrf: token2, intent: "run", token, chunk: String(chunk) }), redirect: "manual", headers: { cookie } });
      return { status: res.status, body: (await res.json()) as Step };
    },
  };
}

const creates = (n: number, domain: string) => ["op,email,givenName", ...Array.from({ length: n }, (_, i) => `create,person${i}@${domain},P${i}`)].join("\n");

describe("bulk in steps", () => {
  it("runs a best-effort file ten rows at a time, each chunk once, with results numbered by the file's lines", async () => {
    const org = await organization();
    const prisma = porta.services.db.prisma;
    const { csrf } = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${org.id}/bulk`);
    const steps = stepsOf(admin, org.id, csrf);
    const staged = await steps.stage(creates(25, "steps.example"), "best_effort");
    expect(staged).toMatchObject({ status: 200, body: { kind: "staged", chunks: 3, total: 25 } });
    // Checking and keeping the file writes no user.
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(0);

    const first = await steps.run(staged.body.token!, 0);
    expect(first.status).toBe(200);
    expect(first.body.result!.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(10);
    // The same chunk again (a replayed request, a double click) is gone, not run twice.
    expect(await steps.run(staged.body.token!, 0)).toEqual({ status: 409, body: { kind: "gone" } });

    await steps.run(staged.body.token!, 1);
    const last = await steps.run(staged.body.token!, 2);
    expect(last.body.result!.results.map((r) => [r.index, r.status, r.user?.email])).toEqual(
      [20, 21, 22, 23, 24].map((i) => [i, "succeeded", `person${i}@steps.example`]),
    );
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(25);
    expect(await steps.run(staged.body.token!, 3)).toEqual({ status: 409, body: { kind: "gone" } });
  });

  it("checks every row before anything runs, and names a bad row by its line", async () => {
    const org = await organization();
    const { csrf } = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${org.id}/bulk`);
    const steps = stepsOf(admin, org.id, csrf);
    const before = await dataFingerprint(porta);
    const csv = ["op,email,givenName", "create,fine@steps.example,Fine", "create,also-fine@steps.example,Also", "create,not-an-email,Bad"].join("\n");
    const refused = await steps.stage(csv, "best_effort");
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ kind: "refused", message: null, problems: [{ line: 4, field: "email", message: "must be an email address" }] });
    expect(await steps.stage(null, "best_effort")).toEqual({ status: 422, body: { kind: "file", problem: "choose" } });
    expect((await steps.stage("op,password\ncreate,x", "best_effort")).body).toMatchObject({ kind: "file", problem: "columns" });
    expect(await dataFingerprint(porta)).toEqual(before);
  });

  it("runs an all-or-nothing file as one step; a row failing at run time changes nothing and is named by its line", async () => {
    const org = await organization();
    const prisma = porta.services.db.prisma;
    await createUser(prisma, org.id, { email: "taken@steps.example" });
    const { csrf } = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${org.id}/bulk`);
    const steps = stepsOf(admin, org.id, csrf);
    const csv = ["op,email,givenName", ...Array.from({ length: 11 }, (_, i) => `create,a${i}@steps.example,A`), "create,taken@steps.example,Taken"].join("\n");
    const staged = await steps.stage(csv, "all_or_nothing");
    expect(staged.body).toMatchObject({ kind: "staged", chunks: 1, total: 12 });
    const ran = await steps.run(staged.body.token!, 0);
    expect(ran.status).toBe(409);
    expect(ran.body.kind).toBe("refused");
    expect(ran.body.message).toContain("Nothing was changed");
    expect(ran.body.problems).toContainEqual(expect.objectContaining({ line: 13, field: "email" }));
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(1);

    const fine = await steps.stage(creates(12, "whole.example"), "all_or_nothing");
    expect((await steps.run(fine.body.token!, 0)).body.result!.succeeded).toBe(12);
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(13);
  });

  it("keeps a staged file to the session that uploaded it, and refuses a step without the session's CSRF token", async () => {
    const org = await organization();
    const prisma = porta.services.db.prisma;
    const { csrf } = await pageWithCsrf(admin.browser, `${porta.baseUrl}/console/organizations/${org.id}/bulk`);
    const staged = await stepsOf(admin, org.id, csrf).stage(creates(3, "mine.example"), "best_effort");
    const theirs = await pageWithCsrf(other.browser, `${porta.baseUrl}/console/organizations/${org.id}/bulk`);
    expect(await stepsOf(other, org.id, theirs.csrf).run(staged.body.token!, 0)).toEqual({ status: 409, body: { kind: "gone" } });
    const forged = await fetch(`${porta.baseUrl}/console/organizations/${org.id}/bulk/run`, {
      method: "POST",
      body: new URLSearchParams({ csrf: "forged", intent: "run", token: staged.body.token!, chunk: "0" }),
      redirect: "manual",
      headers: { cookie: admin.browser.cookieHeader(`${porta.baseUrl}/console`) },
    });
    expect(forged.status).toBe(403);
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(0);
    // The owner still can: neither refusal used the chunk up.
    expect((await stepsOf(admin, org.id, csrf).run(staged.body.token!, 0)).body.result!.succeeded).toBe(3);
  });
});
