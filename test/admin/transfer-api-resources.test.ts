import { randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "~/generated/prisma/client";
import { API_RESOURCE_COLUMNS_NOT_CARRIED } from "~/.server/admin/transfer/export";
import { createPackageSeal } from "~/.server/admin/transfer/package-seal";
import type { ExportPackage, ImportPlan } from "~/schemas/transfer";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { createClient } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { expect422, unique } from "./helpers";

/**
 * API resources and their client grants travel in an organization's export (decision 077): an
 * import into another Porta creates them, a second apply changes nothing, drift is put back, a
 * copy's clients keep their grants under their new ids; a package with a bad identifier, a grant
 * to a client it does not define or of a scope the resource does not define is a 422 naming the
 * field, and nothing is written.
 */
const KEY = randomBytes(32).toString("base64");
const ORDERS = "https://api.example.com/Orders";
const BILLING = "https://billing.example.com/v1";
let source: TestPorta;
let target: TestPorta;
let sourceApi: ReturnType<typeof adminApi>;
let targetApi: ReturnType<typeof adminApi>;
let slug: string;
let orgId: string;
let machine: { id: string; secret: string };
let web: string;
let pkg: ExportPackage;

beforeAll(async () => {
  [source, target] = await Promise.all([startTestPorta({ env: { ENCRYPTION_KEY: KEY } }), startTestPorta({ env: { ENCRYPTION_KEY: KEY } })]);
  sourceApi = adminApi(source, (await obtainAdminTokens(source)).accessToken);
  targetApi = adminApi(target, (await obtainAdminTokens(target)).accessToken);
  const prisma = source.services.db.prisma;
  slug = unique("resources");
  orgId = (await prisma.organization.create({ data: { slug, name: "Resources Ltd" } })).id;
  const made = await createClient(prisma, orgId, { grantTypes: ["client_credentials"], scope: "openid" });
  machine = { id: made.client.id, secret: made.secret!.value };
  web = (await createClient(prisma, orgId)).client.id;
  const orders = await sourceApi.post<{ id: string }>(`/organizations/${orgId}/api-resources`, {
    identifier: ORDERS,
    name: "Orders",
    scopes: ["orders:read", "orders:write"],
    scopeDescriptions: { "orders:read": "Read your orders" },
    accessTokenTtlSeconds: 600,
    consentRequired: false,
  });
  expect(orders.status, JSON.stringify(orders.body)).toBe(201);
  const billing = await sourceApi.post<{ id: string }>(`/organizations/${orgId}/api-resources`, { identifier: BILLING, name: "Billing", scopes: ["invoices"], status: "inactive" });
  expect(billing.status).toBe(201);
  for (const [client, resource, scopes] of [
    [machine.id, orders.body.id, ["orders:read"]],
    [web, orders.body.id, ["orders:read", "orders:write"]],
    [web, billing.body.id, ["invoices"]],
  ] as const) {
    expect((await sourceApi.put(`/clients/${client}/api-resources/${resource}`, { scopes })).status).toBe(200);
  }
  const exported = await sourceApi.get<ExportPackage>(`/organizations/${orgId}/export`);
  expect(exported.status).toBe(200);
  pkg = exported.body;
});

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
});

const sign = (unsigned: Omit<ExportPackage, "signature">): ExportPackage => {
  const seal = createPackageSeal(Buffer.from(KEY, "base64"));
  return { ...unsigned, signature: { alg: "HS256", keyId: seal.keyId, value: seal.sign(unsigned) } };
};
const unsignedOf = (p: ExportPackage): Omit<ExportPackage, "signature"> => {
  const { signature: _s, ...rest } = structuredClone(p);
  return rest;
};

/** The target's API resources and grants, as rows. */
async function resourceRows(porta: TestPorta) {
  const prisma = porta.services.db.prisma;
  const [resources, grants, orgs] = await Promise.all([
    prisma.apiResource.findMany({ orderBy: { identifier: "asc" }, select: { identifier: true, name: true, scopes: true, scopeDescriptions: true, accessTokenTtlSeconds: true, consentRequired: true, openToDynamicClients: true, status: true } }),
    prisma.clientResourceGrant.findMany({ orderBy: [{ clientId: "asc" }, { resourceId: "asc" }], select: { clientId: true, scopes: true, resource: { select: { identifier: true } } } }),
    prisma.organization.count(),
  ]);
  return { resources, grants, orgs };
}

describe("exporting API resources", () => {
  it("carries each resource with its grants by client id, and counts them", async () => {
    expect(pkg.content.apiResources).toEqual([
      {
        identifier: ORDERS,
        name: "Orders",
        scopes: ["orders:read", "orders:write"],
        scopeDescriptions: { "orders:read": "Read your orders" },
        accessTokenTtlSeconds: 600,
        consentRequired: false,
        openToDynamicClients: false,
        status: "active",
        grants: [
          { client: machine.id, scopes: ["orders:read"] },
          { client: web, scopes: ["orders:read", "orders:write"] },
        ].sort((a, b) => (a.client < b.client ? -1 : 1)),
      },
      { identifier: BILLING, name: "Billing", scopes: ["invoices"], scopeDescriptions: {}, accessTokenTtlSeconds: null, consentRequired: true, openToDynamicClients: false, status: "inactive", grants: [{ client: web, scopes: ["invoices"] }] },
    ]);
    expect(pkg.counts).toMatchObject({ apiResources: 2, clientResourceGrants: 3 });
    const manifest = await sourceApi.get<{ counts: Record<string, number> }>(`/organizations/${orgId}/export/manifest`);
    expect(manifest.body.counts).toMatchObject({ apiResources: 2, clientResourceGrants: 3 });
  });

  it("carries every column of an API resource, or leaves it out for a stated reason", () => {
    const carried = Object.keys(pkg.content.apiResources![0]!);
    for (const column of Object.values(Prisma.ApiResourceScalarFieldEnum)) {
      const reason = (API_RESOURCE_COLUMNS_NOT_CARRIED as Record<string, string>)[column];
      expect(reason === undefined ? carried.includes(column) : !carried.includes(column), `ApiResource.${column}: carry it in the package or list it in API_RESOURCE_COLUMNS_NOT_CARRIED`).toBe(true);
    }
  });
});

describe("importing API resources", () => {
  it("refuses bad identifiers, grants to unknown clients or of undefined scopes, and reserved identifiers with 422, writing nothing", async () => {
    const before = await resourceRows(target);
    const withResource = (change: (r: NonNullable<ExportPackage["content"]["apiResources"]>[number]) => void) => {
      const unsigned = unsignedOf(pkg);
      change(unsigned.content.apiResources![1]!);
      return sign(unsigned);
    };
    const cases: Array<[string, ExportPackage, string, string?]> = [
      ["relative identifier", withResource((r) => (r.identifier = "/orders")), "package.content.apiResources.1.identifier"],
      ["identifier with a fragment", withResource((r) => (r.identifier = "https://api.example.com/orders#v1")), "package.content.apiResources.1.identifier"],
      ["not http(s)", withResource((r) => (r.identifier = "urn:example:orders")), "package.content.apiResources.1.identifier"],
      ["repeated scope", withResource((r) => (r.scopes = ["orders:read", "orders:read"])), "package.content.apiResources.1.scopes"],
      ["unknown client", withResource((r) => (r.grants[0]!.client = "no-such-client")), "package.content.apiResources.1.grants.0.client"],
      ["undefined scope", withResource((r) => r.grants[0]!.scopes.push("orders:admin")), "package.content.apiResources.1.grants.0.scopes.1"],
      ["open to self-registered clients without consent", withResource((r) => Object.assign(r, { openToDynamicClients: true, consentRequired: false })), "package.content.apiResources.1.openToDynamicClients"],
      ["description of an undefined scope", withResource((r) => (r.scopeDescriptions = { "orders:admin": "Everything" })), "package.content.apiResources.1.scopeDescriptions.orders:admin"],
      ["the organization's issuer", withResource((r) => (r.identifier = `${target.baseUrl}/${slug}`)), "package.content.apiResources.1.identifier"],
      ["the Admin API", withResource((r) => (r.identifier = `${target.baseUrl}/api/admin`)), "package.content.apiResources.1.identifier"],
    ];
    for (const path of ["/imports/preview", "/imports/apply"]) {
      for (const [label, bad, field] of cases) expect422(await targetApi.post(path, { package: bad }), field, `${path} ${label}`);
    }
    expect(await resourceRows(target)).toEqual(before);
    expect(await target.services.db.prisma.organization.findUnique({ where: { slug } })).toBeNull();
  });

  it("creates the resources and grants; the client gets tokens for them; a second apply changes nothing; drift is put back", async () => {
    const preview = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.changes.filter((c) => c.type === "apiResource")).toEqual([
      { type: "apiResource", key: ORDERS, action: "create" },
      { type: "apiResource", key: BILLING, action: "create" },
    ]);
    const applied = await targetApi.post<ImportPlan & { organizationId: string }>("/imports/apply", { package: pkg });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const sourceRows = await resourceRows(source);
    const imported = await resourceRows(target);
    const ours = (rows: Awaited<ReturnType<typeof resourceRows>>) => ({
      resources: rows.resources.filter((r) => [ORDERS, BILLING].includes(r.identifier)),
      grants: rows.grants.filter((g) => [machine.id, web].includes(g.clientId)),
    });
    expect(ours(imported)).toEqual(ours(sourceRows));

    // The imported client asks the target for the imported resource with its old secret.
    const token = await postForm(`${target.baseUrl}/${slug}/auth/token`, { grant_type: "client_credentials", resource: ORDERS, scope: "orders:read orders:write" }, { authorization: basicAuth(machine.id, machine.secret) });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(decodeJwt(String(token.body.access_token))).toMatchObject({ aud: ORDERS, scope: "orders:read", client_id: machine.id });

    const again = await targetApi.post<ImportPlan>("/imports/apply", { package: pkg });
    expect(again.body.changes).toEqual([]);

    // An administrator there narrowed a grant and renamed a resource: the package puts both back.
    const prisma = target.services.db.prisma;
    const orders = await prisma.apiResource.findFirstOrThrow({ where: { organizationId: applied.body.organizationId, identifier: ORDERS } });
    await prisma.apiResource.update({ where: { id: orders.id }, data: { name: "Renamed" } });
    await prisma.clientResourceGrant.update({ where: { clientId_resourceId: { clientId: web, resourceId: orders.id } }, data: { scopes: ["orders:read"] } });
    const drift = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg });
    expect(drift.body.changes).toEqual([{ type: "apiResource", key: ORDERS, action: "update", fields: ["name", "grants"] }]);
    expect((await targetApi.post("/imports/apply", { package: pkg })).status).toBe(200);
    expect(ours(await resourceRows(target)).grants).toEqual(ours(sourceRows).grants);
    expect((await prisma.apiResource.findUniqueOrThrow({ where: { id: orders.id } })).name).toBe("Orders");
  });

  it("a copy on the same deployment gives the copied clients the grants under their new ids", async () => {
    const copySlug = unique("resources-copy");
    const res: ApiResponse<{ organizationId: string }> = await sourceApi.post("/imports/apply", { package: pkg, slug: copySlug, copy: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const prisma = source.services.db.prisma;
    const grants = await prisma.clientResourceGrant.findMany({ where: { resource: { organizationId: res.body.organizationId } }, include: { client: true, resource: true } });
    expect(grants).toHaveLength(3);
    for (const grant of grants) {
      expect(grant.client.organizationId).toBe(res.body.organizationId);
      expect([machine.id, web]).not.toContain(grant.clientId);
    }
    // The original keeps its own.
    expect(await prisma.clientResourceGrant.count({ where: { resource: { organizationId: orgId } } })).toBe(3);
  });
});
