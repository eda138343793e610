import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "~/generated/prisma/client";
import { PUBLISHED } from "~/.server/oidc/provider/keys";
import { loadActiveTenantsAfter, loadPublicTenant, loadPublicTenants, loadTenant } from "~/.server/oidc/provider/tenant-load";
import { createApplication, createClient, createOrganization } from "../support/factories";
import { openMigratedDatabase, type MigratedDatabase } from "../support/migrated-database";

/**
 * A provider's build reads the organization, its published keys, its custom claims and its API
 * resources in one statement (decisions 034, 077). What it reads must be exactly what the three Prisma reads it
 * replaces would have read.
 */
let database: MigratedDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  database = await openMigratedDatabase();
  prisma = database.db.prisma;
});
afterAll(() => database?.dispose());

const key = (id: string, organizationId: string | null, status: string, extra: { retireAfter?: Date; createdAt?: Date } = {}) =>
  prisma.signingKey.create({ data: { id, organizationId, status, publicJwk: { kid: id }, privateJwkEncrypted: `sealed-${id}`, ...extra } });

describe("loadTenant", () => {
  it("reads what findUnique and the key and claim reads would, in one statement", async () => {
    const org = await prisma.organization.update({
      where: { id: (await createOrganization(prisma, { slug: "Load-Me" })).id },
      data: { branding: { primaryColor: "#123456", logoUrl: "https://example.com/logo.png" }, defaultLoginMethods: ["password"] },
    });
    const other = await createOrganization(prisma);
    await key("k-active", org.id, "active", { createdAt: new Date("2026-01-03T00:00:00Z") });
    await key("k-staged", org.id, "staged", { createdAt: new Date("2026-01-04T00:00:00Z") });
    await key("k-retiring", org.id, "retiring", { createdAt: new Date("2026-01-02T00:00:00Z"), retireAfter: new Date("2030-05-06T07:08:09.123Z") });
    await key("k-retired", org.id, "retired");
    await key("k-shared", null, "retiring", { createdAt: new Date("2025-12-01T00:00:00Z"), retireAfter: new Date("2030-01-01T00:00:00Z") });
    await key("k-other", other.id, "active");
    const app = await createApplication(prisma, org.id);
    const otherApp = await createApplication(prisma, other.id);
    await prisma.customClaimDefinition.create({ data: { applicationId: app.id, claimName: "department", claimType: "string", scope: "profile" } });
    await prisma.customClaimDefinition.create({ data: { applicationId: app.id, claimName: "tier", claimType: "string", scope: "billing" } });
    await prisma.customClaimDefinition.create({ data: { applicationId: otherApp.id, claimName: "elsewhere", claimType: "string", scope: "profile" } });

    const loaded = await loadTenant(database.db, "LOAD-me");

    expect(loaded?.organization).toEqual(await prisma.organization.findUnique({ where: { slug: "load-me" } }));
    const keys = await prisma.signingKey.findMany({
      where: { OR: [{ organizationId: org.id, status: { in: PUBLISHED } }, { organizationId: null, status: "retiring" }] },
      orderBy: { createdAt: "desc" },
      select: { id: true, organizationId: true, status: true, retireAfter: true, privateJwkEncrypted: true, publicJwk: true },
    });
    expect(loaded?.keys).toEqual(keys);
    expect(loaded?.keys.map((k) => k.id)).toEqual(["k-staged", "k-active", "k-retiring", "k-shared"]);
    const claims = await prisma.customClaimDefinition.findMany({
      where: { application: { organizationId: org.id } },
      select: { id: true, claimName: true, scope: true },
    });
    expect(loaded?.customClaims).toEqual(expect.arrayContaining(claims));
    expect(loaded?.customClaims).toHaveLength(2);
  });

  it("answers an organization without keys or claims with empty lists, and an unknown slug with nothing", async () => {
    const org = await createOrganization(prisma, { status: "suspended" });
    const loaded = await loadTenant(database.db, org.slug);
    expect(loaded?.organization.status).toBe("suspended");
    expect(loaded?.customClaims).toEqual([]);
    // The shared retiring key of the first test is published by every organization.
    expect(loaded?.keys.map((k) => k.id)).toEqual(["k-shared"]);
    expect(await loadTenant(database.db, "no-such-organization")).toBeUndefined();
  });

  it("reads the active API resources with their client grants for a provider's build only (decision 077)", async () => {
    const org = await createOrganization(prisma);
    const other = await createOrganization(prisma);
    const { client } = await createClient(prisma, org.id);
    const { client: second } = await createClient(prisma, org.id);
    const orders = await prisma.apiResource.create({ data: { organizationId: org.id, identifier: "https://api.example.com/Orders", name: "Orders", scopes: ["a", "b"], accessTokenTtlSeconds: 600 } });
    const bare = await prisma.apiResource.create({ data: { organizationId: org.id, identifier: "https://api.example.com/bare", name: "Bare", consentRequired: false } });
    await prisma.apiResource.create({ data: { organizationId: org.id, identifier: "https://api.example.com/off", name: "Off", status: "inactive" } });
    await prisma.apiResource.create({ data: { organizationId: other.id, identifier: "https://api.example.com/elsewhere", name: "Elsewhere" } });
    await prisma.clientResourceGrant.create({ data: { clientId: client.id, resourceId: orders.id, scopes: ["a"] } });
    await prisma.clientResourceGrant.create({ data: { clientId: second.id, resourceId: orders.id, scopes: [] } });

    const loaded = await loadTenant(database.db, org.slug);
    // In the database's collation order, which the provider does not depend on.
    expect(loaded?.apiResources).toHaveLength(2);
    expect(loaded?.apiResources).toEqual(
      expect.arrayContaining([
        { identifier: orders.identifier, scopes: ["a", "b"], accessTokenTtlSeconds: 600, consentRequired: true, openToDynamicClients: false, grants: { [client.id]: ["a"], [second.id]: [] } },
        { identifier: bare.identifier, scopes: [], accessTokenTtlSeconds: null, consentRequired: false, openToDynamicClients: false, grants: {} },
      ]),
    );
    expect((await loadTenant(database.db, other.slug))?.apiResources.map((r) => r.identifier)).toEqual(["https://api.example.com/elsewhere"]);
    expect(await loadPublicTenant(database.db, org.slug)).not.toHaveProperty("apiResources");
  });

  it("reads the public inputs of a page of active organizations in slug order, and of many slugs at once, without private keys", async () => {
    const made = [];
    for (const slug of ["page-c", "page-a", "page-d", "page-b"]) made.push(await createOrganization(prisma, { slug }));
    await prisma.organization.update({ where: { slug: "page-b" }, data: { status: "suspended" } });
    await key("k-page-a", made[1]!.id, "active");

    const first = await loadActiveTenantsAfter(database.db, "page-", 2);
    expect(first.map((t) => t.organization.slug)).toEqual(["page-a", "page-c"]);
    const next = await loadActiveTenantsAfter(database.db, "page-c", 2);
    expect(next.map((t) => t.organization.slug)[0]).toBe("page-d");
    expect(first[0]!.keys.map((k) => k.id)).toEqual(["k-page-a", "k-shared"]);
    expect(first[0]!.keys[0]).not.toHaveProperty("privateJwkEncrypted");
    expect(first[0]!.organization).toEqual(await prisma.organization.findUnique({ where: { slug: "page-a" } }));

    const many = await loadPublicTenants(database.db, ["page-b", "page-a", "no-such-organization"]);
    expect(many.map((t) => t.organization.slug).sort()).toEqual(["page-a", "page-b"]);
    expect(many.flatMap((t) => t.keys).every((k) => !("privateJwkEncrypted" in k))).toBe(true);
    expect((await loadPublicTenant(database.db, "PAGE-A"))?.keys[0]).toEqual(first[0]!.keys[0]);
  });
});
