import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldChanges, REDACTED } from "~/.server/audit/diff";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { sqlDuring } from "../login/helpers";
import { createTenant, expect422, unique, type Tenant } from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Names, not ids (decision 039): audit entries and histories carry the names of
 * what they name, resolved per page in one query per kind; updates record their change field by
 * field; one entry can be read on its own; the filters take names; suggestions search them.
 */
interface Named {
  name: string | null;
  organizationId: string | null;
  deleted: boolean;
}
interface Entry {
  id: string;
  eventType: string;
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
  data: Record<string, unknown>;
  names: { organization: Named | null; actor: (Named & { type: string }) | null; target: Named | null; client: (Named & { id: string }) | null };
}
interface Subject {
  type: string;
  id: string;
  name: string;
  detail: string | null;
  organizationId: string | null;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
const prisma = () => porta.services.db.prisma;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await prisma().user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const audit = (query: string) => api.get<Page<Entry>>(`/audit?${query}`);
const only = async (query: string) => {
  const res = await audit(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data, query).toHaveLength(1);
  return res.body.data[0]!;
};

describe("names", () => {
  it("names the organization, the admin who acted and the target, and keeps a deleted user's recorded email", async () => {
    const email = `${unique("named")}@example.com`;
    const created = await api.post<{ id: string }>(`/organizations/${tenant.org.id}/users`, { email });
    expect(created.status).toBe(201);
    const entry = await only(`targetId=${created.body.id}&eventType=user.created`);
    expect(entry.names).toEqual({
      organization: { name: `Organization ${tenant.org.slug}`, organizationId: tenant.org.id, deleted: false },
      actor: { type: "user", name: TEST_ADMIN.email, organizationId: expect.any(String), deleted: false },
      target: { name: email, organizationId: tenant.org.id, deleted: false },
      client: null,
    });

    expect((await api.delete(`/organizations/${tenant.org.id}/users/${created.body.id}`)).status).toBe(204);
    // Once the user is gone, every entry about them shows the email the deletion recorded... or
    // the entry's own (creation recorded it too), marked deleted.
    const gone = await only(`targetId=${created.body.id}&eventType=user.deleted`);
    expect(gone.names.target).toEqual({ name: email, organizationId: tenant.org.id, deleted: true });
  });

  it("a target that is gone and was never named is deleted with no name; a client a sign-in used is named", async () => {
    const ghost = "0190a000-0000-7000-8000-00000000dead";
    const row = await prisma().auditEntry.create({
      data: { eventType: "user.activated", organizationId: tenant.org.id, actorType: "admin", actorId: adminId, targetType: "user", targetId: ghost, data: { clientId: tenant.clientId } },
    });
    const res = await api.get<Entry>(`/audit/${row.id}`);
    expect(res.status).toBe(200);
    expect(res.body.names.target).toEqual({ name: null, organizationId: tenant.org.id, deleted: true });
    const client = await prisma().client.findUniqueOrThrow({ where: { id: tenant.clientId } });
    expect(res.body.names.client).toEqual({ id: tenant.clientId, name: client.name, organizationId: tenant.org.id, deleted: false });
  });

  it("resolves a page with the same statements whatever its size (one query per kind, no query per entry)", async () => {
    const org = await createTenant(porta);
    for (let i = 0; i < 30; i++) {
      const user = await createUser(prisma(), org.org.id);
      await prisma().auditEntry.create({ data: { eventType: "user.activated", organizationId: org.org.id, actorType: "user", actorId: user.id, targetType: "user", targetId: user.id } });
    }
    await audit(`organizationId=${org.org.id}&limit=2`);
    const small = await sqlDuring(porta, () => audit(`organizationId=${org.org.id}&limit=3`));
    const large = await sqlDuring(porta, () => audit(`organizationId=${org.org.id}&limit=30`));
    expect(large.result.body.data).toHaveLength(30);
    expect(large.result.body.data.every((e) => e.names.target?.name?.endsWith("@example.com"))).toBe(true);
    expect(large.sql.length).toBe(small.sql.length);
  });

  it("names an identity provider, finds it by name in the target filter and suggestions, and keeps its name once deleted", async () => {
    const org = await createTenant(porta);
    const name = `Corporate SSO ${org.org.slug}`;
    const created = await api.post<{ id: string }>("/identity-providers", { organizationId: org.org.id, name, issuer: "https://sso.example.com", clientId: "porta" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const entry = await only(`targetId=${created.body.id}&eventType=identity_provider.created`);
    expect(entry.names.target).toEqual({ name, organizationId: org.org.id, deleted: false });

    const byName = await audit(`target=${encodeURIComponent(name.toUpperCase())}`);
    expect(byName.status, JSON.stringify(byName.body)).toBe(200);
    expect(byName.body.data.map((e) => [e.eventType, e.targetId])).toEqual([["identity_provider.created", created.body.id]]);
    const suggested = await api.get<{ data: Subject[] }>(`/audit/subjects?role=target&q=${encodeURIComponent(`sso ${org.org.slug}`)}`);
    expect(suggested.body.data).toContainEqual({ type: "identity_provider", id: created.body.id, name, detail: org.org.slug, organizationId: org.org.id });

    expect((await api.delete(`/identity-providers/${created.body.id}`)).status).toBe(200);
    const gone = await only(`targetId=${created.body.id}&eventType=identity_provider.deleted`);
    expect(gone.names.target).toEqual({ name, organizationId: org.org.id, deleted: true });
  });

  it("histories name who acted", async () => {
    const history = await api.get<{ data: Entry[] }>(`/organizations/${tenant.org.id}/history`);
    expect(history.status).toBe(200);
    await api.put(`/organizations/${tenant.org.id}`, { name: `Renamed ${tenant.org.slug}` });
    const after = await api.get<{ data: Entry[] }>(`/organizations/${tenant.org.id}/history`);
    expect(after.body.data[0]!.names.actor).toEqual({ type: "user", name: TEST_ADMIN.email, organizationId: expect.any(String), deleted: false });
    expect(after.body.data[0]!.names.organization?.name).toBe(`Renamed ${tenant.org.slug}`);
  });
});

describe("field-by-field changes", () => {
  it("records only the fields an update changed, before and after", async () => {
    const before = await prisma().client.findUniqueOrThrow({ where: { id: tenant.clientId } });
    const res = await api.put(`/clients/${tenant.clientId}`, { name: "Renamed client", redirectUris: before.redirectUris, scope: before.scope });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const entry = await only(`targetId=${tenant.clientId}&eventType=client.updated`);
    expect(entry.data.changes).toEqual([{ field: "name", before: before.name, after: "Renamed client" }]);
    // The detail view of the same entry.
    const one = await api.get<Entry>(`/audit/${entry.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(entry);
  });

  it("records a user's email change with the verification it reset, and a setting's old and new value", async () => {
    const user = await createUser(prisma(), tenant.org.id);
    const email = `${unique("moved")}@example.com`;
    expect((await api.put(`/users/${user.id}`, { email, givenName: "Ada" })).status).toBe(200);
    const entry = await only(`targetId=${user.id}&eventType=user.updated`);
    expect(entry.data.changes).toEqual([
      { field: "email", before: user.email, after: email },
      { field: "emailVerified", before: true, after: false },
    ]);

    const key = "auth.lockout.maxFailures";
    const previous = (await api.get<{ data: Array<{ key: string; value: unknown }> }>("/config")).body.data.find((e) => e.key === key)!.value;
    expect((await api.put(`/config/${key}`, { value: 7 })).status).toBe(200);
    const setting = (await audit(`targetId=${key}&eventType=config.updated`)).body.data[0]!;
    expect(setting.data.changes).toEqual([{ field: "value", before: previous, after: 7 }]);
    expect(setting.names.target).toEqual({ name: key, organizationId: null, deleted: false });
  });

  it("never records a secret's value: secret fields are named, their values redacted", () => {
    expect(
      fieldChanges(
        { name: "a", passwordHash: "$argon2id$old", clientSecret: "s1", hasPassword: false, accessTokenTtlSeconds: 60, version: 1 },
        { name: "a", passwordHash: "$argon2id$new", clientSecret: "s2", hasPassword: true, accessTokenTtlSeconds: 120, version: 2 },
      ),
    ).toEqual([
      { field: "passwordHash", before: REDACTED, after: REDACTED },
      { field: "clientSecret", before: REDACTED, after: REDACTED },
      { field: "hasPassword", before: false, after: true },
      { field: "accessTokenTtlSeconds", before: 60, after: 120 },
    ]);
  });

  it("an admin setting a password leaves no trace of it in the audit log", async () => {
    const user = await createUser(prisma(), tenant.org.id);
    const password = "a brand new password 77";
    expect((await api.put(`/organizations/${tenant.org.id}/users/${user.id}/password`, { password })).status).toBeLessThan(300);
    const rows = await prisma().auditEntry.findMany({ where: { targetId: user.id } });
    expect(rows.length).toBeGreaterThan(0);
    const hash = (await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash!;
    for (const row of rows) {
      expect(JSON.stringify(row.data)).not.toContain(password);
      expect(JSON.stringify(row.data)).not.toContain(hash);
    }
  });
});

describe("filters by name", () => {
  it("picks the organization by name or slug, the actor by email and the target by email or name, in any case", async () => {
    const org = await createTenant(porta);
    const email = `${unique("Target")}@Example.com`;
    const created = await api.post<{ id: string }>(`/organizations/${org.org.id}/users`, { email });
    expect(created.status).toBe(201);
    const ids = async (query: string) => {
      const res = await audit(`${query}&eventType=user.created`);
      expect(res.status, `${query} → ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.data.map((e) => e.targetId);
    };
    expect(await ids(`organization=${org.org.slug.toUpperCase()}`)).toEqual([created.body.id]);
    expect(await ids(`organization=${encodeURIComponent(`organization ${org.org.slug}`)}`)).toEqual([created.body.id]);
    expect(await ids(`target=${encodeURIComponent(email.toLowerCase())}`)).toEqual([created.body.id]);
    expect(await ids(`actor=${encodeURIComponent(TEST_ADMIN.email)}&organization=${org.org.slug}`)).toEqual([created.body.id]);

    const client = await prisma().client.findUniqueOrThrow({ where: { id: org.clientId } });
    await prisma().client.update({ where: { id: org.clientId }, data: { name: `Shop ${org.org.slug}` } });
    expect((await api.put(`/clients/${org.clientId}`, { scope: client.scope })).status).toBe(200);
    const byClient = await audit(`target=${encodeURIComponent(`shop ${org.org.slug}`)}`);
    expect(byClient.body.data.map((e) => [e.eventType, e.targetId])).toEqual([["client.updated", org.clientId]]);
  });

  it("answers 422 for a name that matches nothing, an empty or oversized one, and a bad suggestion query", async () => {
    expect422(await audit("organization=no-such-organization-anywhere"), "query.organization");
    expect422(await audit(`actor=${encodeURIComponent("nobody@nowhere.example")}`), "query.actor");
    expect422(await audit("target=nothing-by-this-name"), "query.target");
    expect422(await audit("actor=%20"), "query.actor");
    expect422(await audit(`target=${"x".repeat(201)}`), "query.target");
    expect422(await api.get("/audit/subjects?role=someone&q=ab"), "query.role");
    expect422(await api.get("/audit/subjects?role=target&q=a"), "query.q");
    expect422(await api.get("/audit/not-an-id"), "path.id");
    expect((await api.get(`/audit/0190a000-0000-7000-8000-00000000beef`)).status).toBe(404);
  });

  it("suggests what a text is part of, for search as you type", async () => {
    const org = await createTenant(porta);
    const email = `${unique("suggest")}@example.com`;
    const user = await createUser(prisma(), org.org.id, { email });
    const part = email.slice(0, 14);
    const res = await api.get<{ data: Subject[] }>(`/audit/subjects?role=target&q=${encodeURIComponent(part.toUpperCase())}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toContainEqual({ type: "user", id: user.id, name: email, detail: `Ada Lovelace · ${org.org.slug}`, organizationId: org.org.id });
    const orgs = await api.get<{ data: Subject[] }>(`/audit/subjects?role=organization&q=${org.org.slug.slice(0, 8)}`);
    expect(orgs.body.data.map((s) => s.type)).toEqual(expect.arrayContaining(["organization"]));
    expect(orgs.body.data.every((s) => s.type === "organization")).toBe(true);
  });
});
