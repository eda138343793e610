import argon2 from "argon2";
import bcrypt from "bcryptjs";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ExportPackage, ImportPlan } from "~/schemas/transfer";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, expect422, signIn, unique, type Tenant } from "./helpers";

/**
 * Passwords imported from other systems (decision 085), over the Admin API and a real sign-in:
 * the create wraps the old hash at once (never storing it), the old password signs in with
 * exactly one Argon2id verification and leaves a plain Argon2id hash behind, a wrong one fails
 * with one verification too, bad forms are 422, the reads and the statistics show who is still
 * on an import, an operator can expire the rest, and an export carries a user not yet migrated.
 */
const KEY = randomBytes(32).toString("base64");
let porta: TestPorta;
let target: TestPorta;
let api: ReturnType<typeof adminApi>;
let targetApi: ReturnType<typeof adminApi>;
let tenant: Tenant;

interface UserBody {
  id: string;
  hasPassword: boolean;
  passwordScheme: string | null;
}

beforeAll(async () => {
  [porta, target] = await Promise.all([startTestPorta({ env: { ENCRYPTION_KEY: KEY } }), startTestPorta({ env: { ENCRYPTION_KEY: KEY } })]);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  targetApi = adminApi(target, (await obtainAdminTokens(target)).accessToken);
  tenant = await createTenant(porta);
}, 120_000);
afterAll(async () => {
  await Promise.all([porta?.stop(), target?.stop()]);
});

const prisma = () => porta.services.db.prisma;
const email = () => `${unique("imported")}@example.com`;

/** Signs in and returns how many Argon2id verifications the attempt made, and whether it got through. */
async function attempt(on: TestPorta, where: Tenant, credentials: { email: string; password: string }) {
  const verify = vi.spyOn(on.services.passwords, "verify");
  try {
    const signedIn = await signIn(where, credentials).then(
      () => true,
      () => false,
    );
    return { signedIn, verifications: verify.mock.calls.length };
  } finally {
    verify.mockRestore();
  }
}

async function createImported(body: Record<string, unknown>) {
  const res = await api.post<UserBody>(`/organizations/${tenant.org.id}/users`, { email: email(), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("an imported bcrypt hash", () => {
  it("is wrapped at once: the read says imported:bcrypt, the row keeps the algorithm and salt, never the hash", async () => {
    const hash = await bcrypt.hash("old bcrypt password", 4);
    const user = await createImported({ importedPasswordHash: hash });
    expect(user).toMatchObject({ hasPassword: true, passwordScheme: "imported:bcrypt" });
    const row = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.legacyPassword).toEqual({ scheme: "bcrypt", variant: "2b", cost: 4, salt: hash.slice(7, 29) });
    expect(JSON.stringify(row)).not.toContain(hash.slice(-31));
    const created = await prisma().auditEntry.findFirstOrThrow({ where: { eventType: "user.created", targetId: user.id } });
    expect(created.data).toMatchObject({ change: { hasPassword: true, importedScheme: "bcrypt", weakImport: false } });
    expect(JSON.stringify(created.data)).not.toContain(hash.slice(29));
  });

  it("a wrong password fails after one verification and leaves the import in place", async () => {
    const hash = await bcrypt.hash("old bcrypt password", 4);
    const user = await createImported({ importedPasswordHash: hash });
    const account = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(await attempt(porta, tenant, { email: account.email, password: "not the old password" })).toEqual({ signedIn: false, verifications: 1 });
    // The wrapped value itself is no password either.
    expect(await attempt(porta, tenant, { email: account.email, password: hash.slice(-31) })).toEqual({ signedIn: false, verifications: 1 });
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ passwordHash: account.passwordHash, legacyPassword: account.legacyPassword });
  });

  it("the old password signs in with one verification; the account is then on a plain Argon2id hash of it", async () => {
    const hash = await bcrypt.hash("old bcrypt password", 4);
    const user = await createImported({ importedPasswordHash: hash });
    const account = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(await attempt(porta, tenant, { email: account.email, password: "old bcrypt password" })).toEqual({ signedIn: true, verifications: 1 });

    const after = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(after.legacyPassword).toBeNull();
    expect(after.passwordHash).toMatch(/^\$argon2id\$/);
    expect(after.passwordHash).not.toBe(account.passwordHash);
    expect(await argon2.verify(after.passwordHash!, "old bcrypt password")).toBe(true);
    expect((await api.get<UserBody>(`/users/${user.id}`)).body.passwordScheme).toBe("argon2id");
    // And the next sign-in is an ordinary one.
    expect(await attempt(porta, tenant, { email: account.email, password: "old bcrypt password" })).toEqual({ signedIn: true, verifications: 1 });
  });
});

describe("every imported form signs in with its old password, one verification per attempt", () => {
  const forms: Array<[string, unknown, string, string, boolean?]> = [
    ["Django pbkdf2_sha256", "pbkdf2_sha256$100000$seasalt$7D53paqVS3FbKCTYthRVmd2w/mSOmB8e0Q0eeuKmwOM=", "correct horse", "imported:pbkdf2"],
    [
      "a Keycloak pbkdf2-sha256 credential",
      {
        format: "keycloak",
        secretData: JSON.stringify({ value: "H5R9LZ0QvKxHLm1Lg0IeQXdtUAa+9gf2NeOZns+WHBTpnlaWE/+JwnJ/2OXEjNPW5EusP1xxGLqEqjWDbIcGlg==", salt: "MDEyMzQ1Njc4OWFiY2RlZg==" }),
        credentialData: JSON.stringify({ hashIterations: 27500, algorithm: "pbkdf2-sha256" }),
      },
      "correct horse",
      "imported:pbkdf2",
    ],
    [
      "Firebase's scrypt (its published vector)",
      {
        format: "firebase",
        passwordHash: "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
        salt: "42xEC+ixf3L2lw==",
        signerKey: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
        saltSeparator: "Bw==",
        rounds: 8,
        memCost: 14,
      },
      "user1password",
      "imported:firebase-scrypt",
    ],
    ["passlib's scrypt", "$scrypt$ln=14,r=8,p=1$TmFDbC1zYWx0LTE2Ynl0ZQ$DwxLDfbQHyww2w1ObyWBVSxc3DnN93JCHXCM69iDGvs", "correct horse", "imported:scrypt"],
    ["SHA-512-crypt", "$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG.", "correct horse", "imported:sha512-crypt"],
    ["SHA-256-crypt", "$5$rounds=10000$saltstringsaltst$ffO6RHJbzihHqETll0c/MLDJrGhQw9fAaO1LcVIStWB", "correct horse", "imported:sha256-crypt"],
    ["md5-crypt, allowed as weak", "$1$Xy12ab$APL076MXKuUbY2neNRfJq1", "correct horse", "imported:md5-crypt", true],
  ];

  it.each(forms)("%s", async (_name, importedPasswordHash, password, scheme, weak) => {
    const user = await createImported({ importedPasswordHash, ...(weak ? { allowWeakLegacyHashes: true } : {}) });
    expect(user.passwordScheme).toBe(scheme);
    const { email: address } = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(await attempt(porta, tenant, { email: address, password: `${password}x` })).toEqual({ signedIn: false, verifications: 1 });
    expect(await attempt(porta, tenant, { email: address, password })).toEqual({ signedIn: true, verifications: 1 });
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ legacyPassword: null });
    if (weak) {
      const created = await prisma().auditEntry.findFirstOrThrow({ where: { eventType: "user.created", targetId: user.id } });
      expect(created.data).toMatchObject({ change: { weakImport: true } });
    }
  });

  it("an Argon2i hash with other parameters (made by the argon2 package)", async () => {
    const hash = await argon2.hash("old argon2i password", { type: argon2.argon2i, memoryCost: 4096, timeCost: 2, parallelism: 1 });
    const user = await createImported({ importedPasswordHash: hash });
    expect(user.passwordScheme).toBe("imported:argon2");
    const { email: address } = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(await attempt(porta, tenant, { email: address, password: "old argon2i password" })).toEqual({ signedIn: true, verifications: 1 });
  });
});

describe("what the create refuses, writing nothing", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["a password and an imported hash together", { password: "a long test password 1", importedPasswordHash: "$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG." }, "importedPasswordHash"],
    ["a form Porta does not know", { importedPasswordHash: "abJnggxhB/yWI" }, "importedPasswordHash"],
    ["a weak hash without allowWeakLegacyHashes", { importedPasswordHash: "$1$Xy12ab$APL076MXKuUbY2neNRfJq1" }, "importedPasswordHash"],
    ["allowWeakLegacyHashes without a hash", { allowWeakLegacyHashes: true }, "allowWeakLegacyHashes"],
    ["a Keycloak credential of another algorithm", { importedPasswordHash: { format: "keycloak", secretData: { value: "AAAA", salt: "AAAA" }, credentialData: { hashIterations: 1, algorithm: "argon2" } } }, "importedPasswordHash"],
    ["a structured form of an unknown format", { importedPasswordHash: { format: "ldap", hash: "x" } }, "importedPasswordHash"],
    ["bcrypt beyond the cost a sign-in affords", { importedPasswordHash: `$2b$16$${"a".repeat(53)}` }, "importedPasswordHash"],
  ];
  it.each(cases)("%s", async (_name, body, field) => {
    const address = email();
    const res = await api.post(`/organizations/${tenant.org.id}/users`, { email: address, ...body });
    expect422(res, field);
    expect(await prisma().user.findFirst({ where: { email: address } })).toBeNull();
  });
});

describe("operators see and end imports", () => {
  it("the organization's statistics count users still on an imported hash; expiring those created before a date removes their passwords, audited", async () => {
    const org = await createTenant(porta);
    const make = async () => {
      const res = await api.post<UserBody>(`/organizations/${org.org.id}/users`, { email: email(), importedPasswordHash: await bcrypt.hash("old bcrypt password", 4) });
      expect(res.status).toBe(201);
      return res.body;
    };
    const [old, recent] = [await make(), await make()];
    await api.post(`/organizations/${org.org.id}/users`, { email: email(), password: "a long test password 1" });
    await prisma().user.update({ where: { id: old.id }, data: { createdAt: new Date("2020-01-01T00:00:00Z") } });
    const stats = await api.get<{ users: { total: number; importedPassword: number } }>(`/stats/organizations/${org.org.id}`);
    expect(stats.body.users).toMatchObject({ total: 3, importedPassword: 2 });

    const res = await api.post<{ expired: number }>(`/organizations/${org.org.id}/users/expire-imported-passwords`, { createdBefore: "2021-01-01T00:00:00Z" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ expired: 1 });
    expect((await api.get<UserBody>(`/users/${old.id}`)).body).toMatchObject({ hasPassword: false, passwordScheme: null });
    expect((await api.get<UserBody>(`/users/${recent.id}`)).body).toMatchObject({ hasPassword: true, passwordScheme: "imported:bcrypt" });
    const entry = await prisma().auditEntry.findFirstOrThrow({ where: { eventType: "user.imported_passwords_expired", organizationId: org.org.id } });
    expect(entry.data).toMatchObject({ change: { createdBefore: "2021-01-01T00:00:00.000Z", expired: 1 } });
    expect((await api.get<{ users: { importedPassword: number } }>(`/stats/organizations/${org.org.id}`)).body.users.importedPassword).toBe(1);

    expect422(await api.post(`/organizations/${org.org.id}/users/expire-imported-passwords`, { createdBefore: "yesterday" }), "createdBefore");
    expect((await api.post(`/organizations/0190a000-0000-7000-8000-000000000000/users/expire-imported-passwords`, { createdBefore: "2021-01-01T00:00:00Z" })).status).toBe(404);
  });
});

describe("bulk creation", () => {
  it("takes imported hashes as the create does; its audit entries name the import, never the hash", async () => {
    const address = email();
    const hash = "$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG.";
    const res = await api.post("/bulk", { organizationId: tenant.org.id, operations: [{ op: "create", email: address, importedPasswordHash: hash }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: address } });
    expect(row.legacyPassword).toMatchObject({ scheme: "sha512-crypt" });
    const entries = await prisma().auditEntry.findMany({ where: { eventType: "user.created", targetId: row.id } });
    expect(entries).toHaveLength(1);
    expect(JSON.stringify(entries[0]!.data)).not.toContain("yIZAF3gQ");
    expect(entries[0]!.data).toMatchObject({ change: { imported: true, weakImportAllowed: false } });
    expect(await attempt(porta, tenant, { email: address, password: "correct horse" })).toEqual({ signedIn: true, verifications: 1 });
  });
});

describe("an administrator's own password change ends the import", () => {
  it("setting a password replaces the wrapped hash and forgets the algorithm; removing one removes both", async () => {
    const set = await createImported({ importedPasswordHash: await bcrypt.hash("old bcrypt password", 4) });
    const put = await api.put<UserBody>(`/organizations/${tenant.org.id}/users/${set.id}/password`, { password: "a new long password 42" });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ hasPassword: true, passwordScheme: "argon2id" });
    expect(await prisma().user.findUniqueOrThrow({ where: { id: set.id } })).toMatchObject({ legacyPassword: null });
    const { email: address } = await prisma().user.findUniqueOrThrow({ where: { id: set.id } });
    expect(await attempt(porta, tenant, { email: address, password: "old bcrypt password" })).toEqual({ signedIn: false, verifications: 1 });

    const cleared = await createImported({ importedPasswordHash: await bcrypt.hash("old bcrypt password", 4) });
    const del = await api.delete<UserBody>(`/organizations/${tenant.org.id}/users/${cleared.id}/password`);
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toMatchObject({ hasPassword: false, passwordScheme: null });
    expect(await prisma().user.findUniqueOrThrow({ where: { id: cleared.id } })).toMatchObject({ passwordHash: null, legacyPassword: null });
  });
});

describe("export and import", () => {
  it("carry a user not yet migrated: the old password signs in at the target, once, and migrates there", async () => {
    const org = await createTenant(porta);
    const address = email();
    const created = await api.post<UserBody>(`/organizations/${org.org.id}/users`, { email: address, importedPasswordHash: "$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG." });
    expect(created.status).toBe(201);
    const pkg = (await api.get<ExportPackage>(`/organizations/${org.org.id}/export`)).body;
    const carried = pkg.content.users.find((u) => u.email === address)!;
    expect(carried.legacyPassword).toEqual({ scheme: "sha512-crypt", rounds: 5000, salt: "abcdefgh" });

    const applied = await targetApi.post<ImportPlan>("/imports/apply", { package: pkg });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const targetOrg = await target.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: org.org.slug } });
    const there: Tenant = { ...org, org: { id: targetOrg.id, slug: targetOrg.slug }, issuer: `${target.baseUrl}/${targetOrg.slug}` };
    const imported = await target.services.db.prisma.user.findFirstOrThrow({ where: { organizationId: targetOrg.id, email: address } });
    expect((await targetApi.get<UserBody>(`/users/${imported.id}`)).body.passwordScheme).toBe("imported:sha512-crypt");

    expect(await attempt(target, there, { email: address, password: "correct horse" })).toEqual({ signedIn: true, verifications: 1 });
    expect(await target.services.db.prisma.user.findUniqueOrThrow({ where: { id: imported.id } })).toMatchObject({ legacyPassword: null });
  });
});
