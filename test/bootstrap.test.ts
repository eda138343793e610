import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PrismaClient } from "~/generated/prisma/client";
import { ADMIN_CLIENT_ID, ADMIN_PERMISSIONS, SERVICE_ADMIN_ROLE } from "~/.server/admin/permissions";
import { verifyPassword } from "~/.server/auth/password-hash";
import { bootstrap, type BootstrapOptions } from "~/.server/bootstrap/bootstrap";
import { openDatabase, type Database } from "~/.server/db/client";
import { applyMigrations } from "~/.server/db/migrate";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";

const SLUG = "root-admin";
const LOCAL: BootstrapOptions = { superAdminSlug: SLUG, baseUrl: "http://localhost:3000" };

const LOOPBACK_REDIRECTS = [
  "http://127.0.0.1/callback",
  "http://127.0.0.1/api/oidc/callback",
  "http://localhost/callback",
  "http://localhost/api/oidc/callback",
  "http://[::1]/callback",
  "http://[::1]/api/oidc/callback",
];

let database: TestDatabase;
const connections: Database[] = [];
/** Two clients of one migrated database: separate connections on PostgreSQL, one PGlite otherwise. */
let clients: [PrismaClient, PrismaClient];

beforeAll(async () => {
  database = await createTestDatabase();
  const first = await openDatabase({ databaseUrl: database.url, pgliteDir: "memory://" });
  connections.push(first);
  await applyMigrations(first);
  const second = usingPostgres() ? await openDatabase({ databaseUrl: database.url }) : first;
  if (second !== first) connections.push(second);
  clients = [first.prisma, second.prisma];
});

afterAll(async () => {
  for (const db of connections.reverse()) await db.close();
  await database?.drop();
});

/** Empties every table (the migrations stay applied), as a brand-new database would be. */
async function emptyDatabase(): Promise<void> {
  await connections[0]!.rawTransaction(async (tx) => {
    const tables = await tx.query<{ name: string }>(
      `SELECT table_name::text AS name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    await tx.exec(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")} CASCADE`);
  });
}

/** Everything bootstrap is responsible for, read back from the database. */
async function bootstrapState(prisma: PrismaClient) {
  const organizations = await prisma.organization.findMany({ where: { slug: SLUG } });
  const roles = await prisma.role.findMany({
    where: { name: SERVICE_ADMIN_ROLE },
    include: { permissions: { include: { permission: true } }, users: { include: { user: true } } },
  });
  const client = await prisma.client.findUnique({ where: { id: ADMIN_CLIENT_ID } });
  return { organizations, roles, client, users: await prisma.user.findMany(), organizationCount: await prisma.organization.count() };
}

function expectOneOfEverything(state: Awaited<ReturnType<typeof bootstrapState>>, adminEmail: string) {
  expect(state.organizationCount).toBe(1);
  expect(state.organizations).toHaveLength(1);
  const organization = state.organizations[0]!;
  expect(organization).toMatchObject({ slug: SLUG, status: "active" });

  expect(state.roles).toHaveLength(1);
  const role = state.roles[0]!;
  expect(role.organizationId).toBe(organization.id);
  expect(role.permissions.map((p) => p.permission.name).sort()).toEqual([...ADMIN_PERMISSIONS].sort());
  expect(role.permissions.every((p) => p.permission.organizationId === organization.id)).toBe(true);

  expect(state.client).toMatchObject({
    id: ADMIN_CLIENT_ID,
    organizationId: organization.id,
    applicationType: "native",
    tokenEndpointAuthMethod: "none",
    // The device grant is `porta login --device` (decision 049).
    grantTypes: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    status: "active",
  });
  expect(state.client!.redirectUris).toEqual(expect.arrayContaining(LOOPBACK_REDIRECTS));

  expect(state.users).toHaveLength(1);
  expect(role.users).toHaveLength(1);
  const admin = role.users[0]!.user;
  expect(admin).toMatchObject({ organizationId: organization.id, email: adminEmail, status: "active", emailVerified: true });
  return { organization, admin };
}

describe("bootstrap", () => {
  it("creates the super-admin organization, role, admin client and admin once, however often it runs", async () => {
    await emptyDatabase();
    const [prisma] = clients;
    const first = await bootstrap(prisma, LOCAL);
    const second = await bootstrap(prisma, LOCAL);

    expect(first.createdAdmin?.email).toBe("admin@localhost");
    expect(first.createdAdmin?.generatedPassword).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // Only the run that created the admin returns a password; later starts print none.
    expect(second).toEqual({ organizationId: first.organizationId });

    const { organization, admin } = expectOneOfEverything(await bootstrapState(prisma), "admin@localhost");
    expect(organization.id).toBe(first.organizationId);
    expect(await verifyPassword(admin.passwordHash!, first.createdAdmin!.generatedPassword!)).toBe(true);
    expect(await verifyPassword(admin.passwordHash!, "not the password")).toBe(false);
    // With a loopback BASE_URL the console callback is already one of the loopback URIs.
    const client = await prisma.client.findUniqueOrThrow({ where: { id: ADMIN_CLIENT_ID } });
    expect([...client.redirectUris].sort()).toEqual([...LOOPBACK_REDIRECTS].sort());
  });

  it("creates everything exactly once when two runs race on an empty database", async () => {
    await emptyDatabase();
    const [a, b] = clients;
    const results = await Promise.all([bootstrap(a!, LOCAL), bootstrap(b!, LOCAL)]);
    expect(results[0]!.organizationId).toBe(results[1]!.organizationId);
    const creators = results.filter((r) => r.createdAdmin);
    expect(creators).toHaveLength(1);
    const password = creators[0]!.createdAdmin!.generatedPassword!;
    expect(password).toBeTruthy();

    const { admin } = expectOneOfEverything(await bootstrapState(a!), "admin@localhost");
    expect(await verifyPassword(admin.passwordHash!, password)).toBe(true);

    // And twice more, concurrently, on the bootstrapped database: nothing new.
    const again = await Promise.all([bootstrap(a!, LOCAL), bootstrap(b!, LOCAL)]);
    expect(again.every((r) => r.createdAdmin === undefined)).toBe(true);
    expectOneOfEverything(await bootstrapState(a!), "admin@localhost");
  });

  describe("on one database, run after run", () => {
    let prisma: PrismaClient;
    const password = "a bootstrap password 42";

    it("uses ADMIN_BOOTSTRAP_EMAIL (lower-cased) and ADMIN_BOOTSTRAP_PASSWORD, and returns no password", async () => {
      await emptyDatabase();
      [prisma] = clients;
      const result = await bootstrap(prisma, { ...LOCAL, adminEmail: "Ops@Example.COM", adminPassword: password });
      expect(result.createdAdmin).toEqual({ email: "ops@example.com" });
      const { admin } = expectOneOfEverything(await bootstrapState(prisma), "ops@example.com");
      expect(await verifyPassword(admin.passwordHash!, password)).toBe(true);
    });

    it("adds the console callback of a public BASE_URL, and follows a changed BASE_URL", async () => {
      await bootstrap(prisma, { ...LOCAL, baseUrl: "https://id.example.com", adminEmail: "ops@example.com", adminPassword: password });
      let client = await prisma.client.findUniqueOrThrow({ where: { id: ADMIN_CLIENT_ID } });
      expect([...client.redirectUris].sort()).toEqual([...LOOPBACK_REDIRECTS, "https://id.example.com/api/oidc/callback"].sort());

      await bootstrap(prisma, { ...LOCAL, baseUrl: "https://login.example.org", adminEmail: "ops@example.com", adminPassword: password });
      client = await prisma.client.findUniqueOrThrow({ where: { id: ADMIN_CLIENT_ID } });
      expect(client.redirectUris).toContain("https://login.example.org/api/oidc/callback");
      expect(client.redirectUris).not.toContain("https://id.example.com/api/oidc/callback");
      expectOneOfEverything(await bootstrapState(prisma), "ops@example.com");
    });

    it("restores admin permissions that went missing from the service-admin role", async () => {
      const role = await prisma.role.findFirstOrThrow({ where: { name: SERVICE_ADMIN_ROLE } });
      await prisma.permission.deleteMany({ where: { name: "admin:org:update" } });
      await prisma.rolePermission.deleteMany({ where: { roleId: role.id, permission: { name: "admin:user:write" } } });
      const result = await bootstrap(prisma, { ...LOCAL, adminEmail: "ops@example.com", adminPassword: password });
      expect(result.createdAdmin).toBeUndefined();
      expectOneOfEverything(await bootstrapState(prisma), "ops@example.com");
    });

    it("makes a new admin password when no active service-admin is left, and says so", async () => {
      await prisma.user.updateMany({ data: { status: "inactive" } });
      const result = await bootstrap(prisma, { ...LOCAL, adminEmail: "ops@example.com" });
      expect(result.createdAdmin?.email).toBe("ops@example.com");
      const generated = result.createdAdmin?.generatedPassword;
      expect(generated).toBeTruthy();
      const admin = await prisma.user.findFirstOrThrow({ where: { email: "ops@example.com" } });
      expect(admin.status).toBe("active");
      expect(await verifyPassword(admin.passwordHash!, generated!)).toBe(true);
      expect(await verifyPassword(admin.passwordHash!, password)).toBe(false);
      expect(await bootstrap(prisma, { ...LOCAL, adminEmail: "ops@example.com" })).toEqual({ organizationId: result.organizationId });
    });
  });
});
