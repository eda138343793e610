import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { obtainAdminTokens } from "../support/admin-api";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { runPorta } from "./helpers";

/**
 * `porta import-users` as a child process against a real Porta: a preview writes nothing, an
 * apply of a file of several batches shows its progress from the committed batches and reports
 * what it did, a second run changes nothing, and a wrong file is refused with the fields named.
 */
let porta: TestPorta;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  porta = await startTestPorta();
  dir = mkdtempSync(path.join(tmpdir(), "porta-import-"));
  env = { PORTA_CONFIG_DIR: dir, PORTA_TOKEN: (await obtainAdminTokens(porta)).accessToken, PORTA_SERVER: porta.url };
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("porta import-users", () => {
  it("previews without writing, applies with progress by committed batch, and a second run changes nothing", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const file = path.join(dir, "users.ndjson");
    writeFileSync(file, Array.from({ length: 1000 }, (_, i) => JSON.stringify({ user_id: `auth0|${i}`, email: `cli-${i}@example.com`, email_verified: true })).join("\n"));

    const preview = await runPorta(["import-users", "--org", org.slug, "--format", "auth0", file, "--preview", "--json"], env);
    expect(preview.code, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout)).toMatchObject({ format: "auth0", created: 1000 });
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: org.id } })).toBe(0);

    const applied = await runPorta(["import-users", "--org", org.slug, "--format", "auth0", file], env);
    expect(applied.code, applied.stderr).toBe(0);
    // Batches of 200 commit one by one: the bar shows some while the import still runs, then all five.
    expect(applied.stderr).toMatch(/batch [1-4] of 5/);
    expect(applied.stderr).toContain("[##############################] batch 5 of 5");
    expect(applied.stdout).toMatch(/created\s+1000/);
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: org.id } })).toBe(1000);

    const again = await runPorta(["import-users", "--org", org.id, "--format", "auth0", file, "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 1000, batches: 0 });
  }, 120_000);

  it("refuses a file of another shape with the fields named, and usage mistakes before any request", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const file = path.join(dir, "bad.csv");
    writeFileSync(file, "email,pasword_hash\na@example.com,x\n");
    const refused = await runPorta(["import-users", "--org", org.slug, "--format", "csv", file], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("validation_failed");
    expect(refused.stderr).toContain("pasword_hash");
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: org.id } })).toBe(0);

    const noFormat = await runPorta(["import-users", "--org", org.slug, file], env);
    expect(noFormat.code).toBe(2);
    expect(noFormat.stderr).toContain("--format keycloak|auth0|csv|json");
    const missing = await runPorta(["import-users", "--org", org.slug, "--format", "csv", path.join(dir, "nope.csv")], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("ENOENT");
  });
});
