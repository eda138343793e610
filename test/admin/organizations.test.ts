import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import {
  BAD_CURSOR,
  dataFingerprint,
  expect422,
  expectError,
  FORGED_CURSOR,
  OVERSIZE,
  PASSWORD,
  signIn,
  tenantOf,
  unique,
  userinfoStatus,
  type BadRequest,
} from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Every organization operation of the Admin API against a real server: listing in both modes
 * with sorting and search, create, get, update with ETags, suspend/activate/delete with their
 * effect on the protocol routes and sessions, slug validation, history, and bad input.
 */
interface Organization {
  id: string;
  name: string;
  slug: string;
  status: string;
  defaultLoginMethods: string[];
  twoFactorPolicy: string;
  defaultLocale: string;
  createdAt: string;
  updatedAt: string;
}
interface History {
  data: Array<{ id: string; eventType: string; actorType: string }>;
  hasMore: boolean;
  nextCursor: string | null;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const createOrg = (body: Record<string, unknown>) => api.post<Organization>("/organizations", body);
const discovery = async (slug: string) => {
  const res = await fetch(`${porta.baseUrl}/${slug}/.well-known/openid-configuration`);
  await res.arrayBuffer();
  return res.status;
};

describe("organizations", () => {
  it("creates (201, ETag, defaults), gets with the ETag, and refuses a taken slug with 409", async () => {
    const slug = unique("acme");
    const res = await createOrg({ name: "Acme", slug });
    expect(res.status).toBe(201);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.body).toMatchObject({ name: "Acme", slug, status: "active", defaultLoginMethods: ["password", "magic_link"], twoFactorPolicy: "optional", defaultLocale: "en" });
    const got = await api.get<Organization>(`/organizations/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("etag")).toBe('"v1"');
    expect(got.body).toEqual(res.body);
    expect(await discovery(slug)).toBe(200);
    const before = await dataFingerprint(porta);
    expectError(await createOrg({ name: "Other", slug }), 409, "duplicate");
    expect(await dataFingerprint(porta)).toEqual(before);
    const custom = await createOrg({ name: "Custom", slug: unique("custom"), defaultLoginMethods: ["magic_link"], twoFactorPolicy: "required_totp", defaultLocale: "de" });
    expect(custom.body).toMatchObject({ defaultLoginMethods: ["magic_link"], twoFactorPolicy: "required_totp", defaultLocale: "de" });
    expectError(await api.get("/organizations/00000000-0000-4000-8000-000000000000"), 404, "not_found");
  });

  it("lists with offset and cursor paging, sorting, search and status filter", async () => {
    const mark = unique("lst");
    const made: Organization[] = [];
    for (const name of ["Charlie", "Alpha", "Bravo", "Delta"]) made.push((await createOrg({ name: `${name} ${mark}`, slug: `${mark}-${name.toLowerCase()}` })).body);
    await api.post(`/organizations/${made[3]!.id}/suspend`);

    const byName = await api.get<Page<Organization>>(`/organizations?q=${mark}&sort=name&page=1&pageSize=2`);
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ total: 4, page: 1, pageSize: 2 });
    expect(byName.body.data.map((o) => o.name.split(" ")[0])).toEqual(["Alpha", "Bravo"]);
    const page2 = await api.get<Page<Organization>>(`/organizations?q=${mark}&sort=name&page=2&pageSize=2`);
    expect(page2.body.data.map((o) => o.name.split(" ")[0])).toEqual(["Charlie", "Delta"]);
    const bySlugDesc = await api.get<Page<Organization>>(`/organizations?q=${mark}&sort=slug&order=desc`);
    expect(bySlugDesc.body.data.map((o) => o.slug)).toEqual(["delta", "charlie", "bravo", "alpha"].map((n) => `${mark}-${n}`));
    const byCreated = await api.get<Page<Organization>>(`/organizations?q=${mark}`);
    expect(byCreated.body.data.map((o) => o.id)).toEqual(made.map((o) => o.id));

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.get<Page<Organization>>(`/organizations?q=${mark}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(4);
      seen.push(...res.body.data.map((o) => o.id));
      cursor = res.body.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual(made.map((o) => o.id));

    // Search matches the name case-insensitively and the slug.
    expect((await api.get<Page<Organization>>(`/organizations?q=${encodeURIComponent(`BRAVO ${mark}`)}`)).body.data.map((o) => o.id)).toEqual([made[2]!.id]);
    expect((await api.get<Page<Organization>>(`/organizations?q=${mark}-charlie`)).body.data.map((o) => o.id)).toEqual([made[0]!.id]);
    // Any substring, also inside a word and in either case (the trigram indexes of decision 030
    // answer three characters and more; shorter ones are still searched, by reading the rows).
    const ids = async (q: string) => (await api.get<Page<Organization>>(`/organizations?q=${encodeURIComponent(q)}`)).body.data.map((o) => o.id);
    expect(await ids(`rav`)).toContain(made[2]!.id);
    expect(await ids(`${mark.toUpperCase()}-DEL`)).toEqual([made[3]!.id]);
    expect(await ids(`lpha ${mark}`)).toEqual([made[1]!.id]);
    expect(await ids(`${mark.slice(-4)}-ch`)).toEqual([made[0]!.id]);
    const suspended = await api.get<Page<Organization>>(`/organizations?q=${mark}&status=suspended`);
    expect(suspended.body.data.map((o) => o.id)).toEqual([made[3]!.id]);
  });

  it("updates with If-Match: of two writers holding the same ETag one wins and one gets 409", async () => {
    const org = (await createOrg({ name: "Race", slug: unique("race") })).body;
    const etag = (await api.get(`/organizations/${org.id}`)).headers.get("etag")!;
    const [a, b] = await Promise.all([
      api.put<Organization>(`/organizations/${org.id}`, { name: "Writer A" }, { "if-match": etag }),
      api.put<Organization>(`/organizations/${org.id}`, { defaultLoginMethods: ["password"] }, { "if-match": etag }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expectError(a.status === 409 ? a : b, 409, "etag_mismatch");
    const winner = a.status === 200 ? a : b;
    expect(winner.headers.get("etag")).toBe('"v2"');
    const now = await api.get<Organization>(`/organizations/${org.id}`);
    expect(now.body).toEqual(winner.body);
    const next = await api.put<Organization>(`/organizations/${org.id}`, { name: "Renamed", twoFactorPolicy: "required_any", defaultLocale: "de" }, { "if-match": '"v2"' });
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ name: "Renamed", twoFactorPolicy: "required_any", defaultLocale: "de" });
    expect(next.headers.get("etag")).toBe('"v3"');
    // Without If-Match the write applies to the current version.
    expect((await api.put(`/organizations/${org.id}`, { name: "Last" })).status).toBe(200);
    expectError(await api.put("/organizations/00000000-0000-4000-8000-000000000000", { name: "x" }), 404);
  });

  it("suspend: protocol routes 404 and sessions end; activate: 200 again", async () => {
    const org = (await createOrg({ name: "Suspendable", slug: unique("susp") })).body;
    const tenant = await tenantOf(porta, org);
    const user = await createUser(porta.services.db.prisma, org.id, { email: `${unique("u")}@example.com`, password: PASSWORD });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(200);

    const suspended = await api.post<Organization>(`/organizations/${org.id}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.status).toBe("suspended");
    expect(await discovery(org.slug)).toBe(404);
    expect(await discovery(org.slug.toUpperCase())).toBe(404);
    expect(await porta.services.db.prisma.oidcPayload.count({ where: { organizationId: org.id } })).toBe(0);

    const activated = await api.post<Organization>(`/organizations/${org.id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body.status).toBe("active");
    expect(await discovery(org.slug)).toBe(200);
    // The tokens from before the suspension stay dead.
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    await expect(oidc.refreshTokenGrant(session.config, session.refreshToken!)).rejects.toThrow();
    const fresh = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, fresh.accessToken)).toBe(200);
  });

  it("delete: 204, then 404 everywhere, and its sessions end; the super-admin organization is protected", async () => {
    const org = (await createOrg({ name: "Doomed", slug: unique("doomed") })).body;
    const tenant = await tenantOf(porta, org);
    const user = await createUser(porta.services.db.prisma, org.id, { email: `${unique("u")}@example.com`, password: PASSWORD });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await porta.services.db.prisma.oidcPayload.count({ where: { organizationId: org.id } })).toBeGreaterThan(0);

    const res = await api.delete(`/organizations/${org.id}`);
    expect(res.status).toBe(204);
    expectError(await api.get(`/organizations/${org.id}`), 404, "not_found");
    expectError(await api.put(`/organizations/${org.id}`, { name: "Back" }), 404);
    expectError(await api.post(`/organizations/${org.id}/activate`), 404);
    expectError(await api.delete(`/organizations/${org.id}`), 404);
    expect(await discovery(org.slug)).toBe(404);
    expect(await porta.services.db.prisma.oidcPayload.count({ where: { organizationId: org.id } })).toBe(0);
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(404);
    expect((await api.get<Page<Organization>>(`/organizations?q=${org.slug}`)).body.total).toBe(0);
    expect((await api.get<Page<Organization>>(`/organizations?q=${org.slug}&status=deleted`)).body.total).toBe(1);

    const superOrg = await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    expectError(await api.post(`/organizations/${superOrg.id}/suspend`), 409, "protected_organization");
    expectError(await api.delete(`/organizations/${superOrg.id}`), 409, "protected_organization");
  });

  it("validates slugs: well-formed and free, taken, malformed, reserved", async () => {
    const taken = (await createOrg({ name: "Taken", slug: unique("taken") })).body.slug;
    const free = unique("free");
    expect((await api.get(`/organizations/validate-slug?slug=${free}`)).body).toEqual({ slug: free, valid: true, available: true });
    expect((await api.get(`/organizations/validate-slug?slug=${taken}`)).body).toMatchObject({ slug: taken, valid: true, available: false, message: expect.any(String) });
    expect((await api.get("/organizations/validate-slug?slug=Bad%20Slug")).body).toMatchObject({ valid: false, available: false, message: expect.any(String) });
    expect((await api.get("/organizations/validate-slug?slug=api")).body).toMatchObject({ valid: false, message: expect.stringMatching(/reserved/) });
  });

  it("folds an upper-case slug to lower case: create, validate-slug, and a case variant is a duplicate (409)", async () => {
    const lower = unique("folded");
    const mixed = lower.replace(/^f/, "F").toUpperCase();
    const created = await createOrg({ name: "Folded", slug: mixed });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.slug).toBe(lower);
    expect(await discovery(lower)).toBe(200);
    expectError(await createOrg({ name: "Variant", slug: lower.toUpperCase() }), 409, "duplicate");
    expect((await api.get(`/organizations/validate-slug?slug=${mixed}`)).body).toMatchObject({ slug: lower, valid: true, available: false });
    const free = unique("upper");
    expect((await api.get(`/organizations/validate-slug?slug=${free.toUpperCase()}`)).body).toEqual({ slug: free, valid: true, available: true });
  });

  it("keeps a history with limit, after and eventType; an invalid after is 422", async () => {
    const org = (await createOrg({ name: "Historic", slug: unique("hist") })).body;
    await api.put(`/organizations/${org.id}`, { name: "Historic 2" });
    await api.post(`/organizations/${org.id}/suspend`);
    await api.post(`/organizations/${org.id}/activate`);
    const all = await api.get<History>(`/organizations/${org.id}/history`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((e) => e.eventType)).toEqual(["organization.activated", "organization.suspended", "organization.updated", "organization.created"]);
    expect(all.body).toMatchObject({ hasMore: false, nextCursor: null });
    const first = await api.get<History>(`/organizations/${org.id}/history?limit=2`);
    expect(first.body.data.map((e) => e.eventType)).toEqual(["organization.activated", "organization.suspended"]);
    expect(first.body.hasMore).toBe(true);
    const second = await api.get<History>(`/organizations/${org.id}/history?limit=2&after=${first.body.nextCursor}`);
    expect(second.body.data.map((e) => e.eventType)).toEqual(["organization.updated", "organization.created"]);
    expect(second.body.hasMore).toBe(false);
    const filtered = await api.get<History>(`/organizations/${org.id}/history?eventType=organization.suspended`);
    expect(filtered.body.data.map((e) => e.eventType)).toEqual(["organization.suspended"]);
    expect422(await api.get(`/organizations/${org.id}/history?after=${BAD_CURSOR}`), "after");
    expect422(await api.get(`/organizations/${org.id}/history?after=${FORGED_CURSOR}`), "after");
    expectError(await api.get("/organizations/00000000-0000-4000-8000-000000000000/history"), 404);
  });
});

describe("bad input", () => {
  it("answers 422 with field details for every route and writes nothing", async () => {
    const org = (await createOrg({ name: "Target", slug: unique("target") })).body;
    const o = `/organizations/${org.id}`;
    const cases: BadRequest[] = [
      { label: "list: page 0", method: "GET", path: "/organizations?page=0", field: "query.page" },
      { label: "list: pageSize a word", method: "GET", path: "/organizations?pageSize=all", field: "query.pageSize" },
      { label: "list: unknown sort", method: "GET", path: "/organizations?sort=version", field: "query.sort" },
      { label: "list: unknown status", method: "GET", path: "/organizations?status=gone", field: "query.status" },
      { label: "list: unknown parameter", method: "GET", path: "/organizations?name=x", field: "query.name" },
      { label: "list: oversize q", method: "GET", path: `/organizations?q=${"q".repeat(201)}`, field: "query.q" },
      { label: "list: invalid cursor", method: "GET", path: `/organizations?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "list: forged cursor", method: "GET", path: `/organizations?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "list: oversize cursor", method: "GET", path: `/organizations?cursor=${OVERSIZE}`, field: "query.cursor" },
      { label: "create: no name", method: "POST", path: "/organizations", body: { slug: unique("s") }, field: "name" },
      { label: "create: name a number", method: "POST", path: "/organizations", body: { name: 1, slug: unique("s") }, field: "name" },
      { label: "create: oversize name", method: "POST", path: "/organizations", body: { name: OVERSIZE, slug: unique("s") }, field: "name" },
      { label: "create: malformed slug", method: "POST", path: "/organizations", body: { name: "n", slug: "Bad Slug" }, field: "slug" },
      { label: "create: oversize slug", method: "POST", path: "/organizations", body: { name: "n", slug: "s".repeat(64) }, field: "slug" },
      { label: "create: reserved slug", method: "POST", path: "/organizations", body: { name: "n", slug: "api" }, field: "slug" },
      { label: "create: no login method", method: "POST", path: "/organizations", body: { name: "n", slug: unique("s"), defaultLoginMethods: [] }, field: "defaultLoginMethods" },
      { label: "create: unknown login method", method: "POST", path: "/organizations", body: { name: "n", slug: unique("s"), defaultLoginMethods: ["sms"] }, field: "defaultLoginMethods.0" },
      { label: "create: unknown policy", method: "POST", path: "/organizations", body: { name: "n", slug: unique("s"), twoFactorPolicy: "always" }, field: "twoFactorPolicy" },
      { label: "create: unknown locale", method: "POST", path: "/organizations", body: { name: "n", slug: unique("s"), defaultLocale: "fr" }, field: "defaultLocale" },
      { label: "create: unknown field", method: "POST", path: "/organizations", body: { name: "n", slug: unique("s"), status: "suspended" }, field: "status" },
      { label: "get: id not a UUID", method: "GET", path: "/organizations/acme", field: "path.id" },
      { label: "update: id not a UUID", method: "PUT", path: "/organizations/acme", body: { name: "x" }, field: "path.id" },
      { label: "update: empty name", method: "PUT", path: o, body: { name: " " }, field: "name" },
      { label: "update: slug is fixed", method: "PUT", path: o, body: { slug: unique("s") }, field: "slug" },
      { label: "update: repeated login method", method: "PUT", path: o, body: { defaultLoginMethods: ["password", "password"] }, field: "defaultLoginMethods" },
      { label: "update: policy a number", method: "PUT", path: o, body: { twoFactorPolicy: 1 }, field: "twoFactorPolicy" },
      { label: "delete: id not a UUID", method: "DELETE", path: "/organizations/acme", field: "path.id" },
      { label: "suspend: id not a UUID", method: "POST", path: "/organizations/acme/suspend", field: "path.id" },
      { label: "activate: id not a UUID", method: "POST", path: "/organizations/acme/activate", field: "path.id" },
      { label: "validate-slug: no slug", method: "GET", path: "/organizations/validate-slug", field: "query.slug" },
      { label: "validate-slug: oversize slug", method: "GET", path: `/organizations/validate-slug?slug=${"s".repeat(201)}`, field: "query.slug" },
      { label: "validate-slug: unknown parameter", method: "GET", path: "/organizations/validate-slug?slug=a&name=b", field: "query.name" },
      { label: "history: id not a UUID", method: "GET", path: "/organizations/acme/history", field: "path.id" },
      { label: "history: limit too big", method: "GET", path: `${o}/history?limit=500`, field: "query.limit" },
      { label: "history: invalid after", method: "GET", path: `${o}/history?after=${BAD_CURSOR}`, field: "after" },
      { label: "history: bad eventType", method: "GET", path: `${o}/history?eventType=Organization%20Updated`, field: "query.eventType" },
      { label: "history: unknown parameter", method: "GET", path: `${o}/history?cursor=x`, field: "query.cursor" },
    ];
    const before = await dataFingerprint(porta);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
    expect((await api.get<Organization>(o)).body).toEqual(org);
  });
});
