import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "~/generated/prisma/client";
import { PUBLISHED } from "~/.server/oidc/keys";
import { loadTenant } from "~/.server/oidc/tenant-load";
import { createApplication, createOrganization } from "../support/factories";
import { openMigratedDatabase, type MigratedDatabase } from "../support/migrated-database";

/**
 * A provider's build reads the organization, its published keys and its custom claims in one
 * statement (decision 034). What it reads must be exactly what the three Prisma reads it
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

    const loaded = await loadTenant(prisma, "LOAD-me");

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
    const loaded = await loadTenant(prisma, org.slug);
    expect(loaded?.organization.status).toBe("suspended");
    expect(loaded?.customClaims).toEqual([]);
    // The shared retiring key of the first test is published by every organization.
    expect(loaded?.keys.map((k) => k.id)).toEqual(["k-shared"]);
    expect(await loadTenant(prisma, "no-such-organization")).toBeUndefined();
  });
});
