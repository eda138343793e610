import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, signIn, unique, userinfoStatus, type Tenant } from "../admin/helpers";
import { expectScimError, GROUP_SCHEMA, issueScimToken, patch, scimClient, USER_SCHEMA, type ScimClient } from "./support";

/**
 * SCIM 2.0 provisioning (decision 084) as the two common clients drive it, over HTTP against a
 * real server on PostgreSQL: Entra ID's and Okta's documented request sequences, deprovisioning
 * that ends sessions, groups as roles, and every write on the audit record as the token.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;
let scim: ScimClient;
let tokenId: string;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  const issued = await issueScimToken(api, tenant.org.id);
  tokenId = issued.id;
  scim = scimClient(porta, tenant.org.slug, issued.token);
});
afterAll(async () => {
  await porta?.stop();
});

const userFilter = (userName: string) => `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`;

describe("Entra ID's provisioning sequence", () => {
  it("looks a user up, creates them, deactivates them with a string boolean, changes their work email, and manages a group's members", async () => {
    const email = `${unique("entra")}@contoso.example`;
    const lookup = await scim.send("GET", userFilter(email));
    expect(lookup.status).toBe(200);
    expect(lookup.body).toMatchObject({ totalResults: 0, Resources: [], startIndex: 1 });

    const created = await scim.send("POST", "/Users", {
      schemas: [USER_SCHEMA, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
      externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
      userName: email.toUpperCase(),
      active: true,
      displayName: "Grace Hopper",
      emails: [{ primary: true, type: "work", value: email }],
      name: { formatted: "Grace Hopper", familyName: "Hopper", givenName: "Grace" },
      title: "Rear Admiral",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Navy" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const user = created.body as { id: string; meta: { location: string; version: string } };
    expect(created.headers.get("location")).toBe(`${scim.endpoint}/Users/${user.id}`);
    expect(created.headers.get("etag")).toBe(user.meta.version);
    expect(created.body).toMatchObject({
      schemas: [USER_SCHEMA],
      userName: email,
      externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
      name: { givenName: "Grace", familyName: "Hopper" },
      emails: [{ value: email, type: "work", primary: true }],
      active: true,
      meta: { resourceType: "User", location: `${scim.endpoint}/Users/${user.id}` },
    });
    expect(user.meta.version).toMatch(/^W\/"\d+"$/);
    const found = await scim.send("GET", userFilter(email));
    expect(found.body).toMatchObject({ totalResults: 1, itemsPerPage: 1 });
    expect(found.body.Resources?.[0]?.id).toBe(user.id);

    const deactivated = await scim.send("PATCH", `/Users/${user.id}`, patch({ op: "Replace", path: "active", value: "False" }));
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect((await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } })).status).toBe("inactive");

    const newEmail = `${unique("grace")}@contoso.example`;
    const moved = await scim.send("PATCH", `/Users/${user.id}`, patch({ op: "Replace", path: 'emails[type eq "work"].value', value: newEmail }, { op: "Replace", path: "name.givenName", value: "Amazing Grace" }));
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ userName: newEmail, emails: [{ value: newEmail, type: "work", primary: true }], name: { givenName: "Amazing Grace", familyName: "Hopper" } });

    const groupName = unique("Engineering");
    const group = await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: groupName, externalId: "grp-1", members: [] });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const groupId = group.body.id as string;
    expect(group.body).toMatchObject({ displayName: groupName, externalId: "grp-1", members: [], meta: { resourceType: "Group" } });
    const role = await porta.services.db.prisma.role.findUniqueOrThrow({ where: { id: groupId } });
    expect(role).toMatchObject({ organizationId: tenant.org.id, name: groupName });

    const added = await scim.send("PATCH", `/Groups/${groupId}`, patch({ op: "Add", path: "members", value: [{ value: user.id }] }));
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.members).toEqual([{ value: user.id, display: newEmail, $ref: `${scim.endpoint}/Users/${user.id}` }]);
    const member = await scim.send("GET", `/Groups?filter=${encodeURIComponent(`id eq "${groupId}" and members[value eq "${user.id}"]`)}&excludedAttributes=members`);
    expect(member.body.totalResults).toBe(1);
    expect(member.body.Resources?.[0]).not.toHaveProperty("members");

    const removed = await scim.send("PATCH", `/Groups/${groupId}`, patch({ op: "Remove", path: `members[value eq "${user.id}"]` }));
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual([]);
    expect(await porta.services.db.prisma.userRole.count({ where: { roleId: groupId } })).toBe(0);

    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { organizationId: tenant.org.id, OR: [{ targetId: user.id }, { targetId: groupId }] }, orderBy: { createdAt: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["user.created", "user.deactivated", "user.updated", "role.created", "user.role_assigned", "user.role_removed"]);
    for (const event of events) expect(event).toMatchObject({ actorType: "scim_token", actorId: tokenId });
  });

  it("removes members named in the value of a path without a filter, as Entra ID also sends", async () => {
    const a = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("m")}@contoso.example` });
    const b = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("m")}@contoso.example` });
    const group = await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: unique("pair"), members: [{ value: a.id }, { value: b.id }] });
    expect(group.status).toBe(201);
    expect((group.body.members as unknown[]).length).toBe(2);
    const res = await scim.send("PATCH", `/Groups/${group.body.id as string}`, patch({ op: "Remove", path: "members", value: [{ value: a.id }] }));
    expect((res.body.members as Array<{ value: string }>).map((m) => m.value)).toEqual([b.id]);
  });
});

describe("Okta's provisioning sequence", () => {
  it("looks a user up, creates them, replaces them with PUT and deactivates them with a path-less PATCH", async () => {
    const email = `${unique("okta")}@example.org`;
    expect((await scim.send("GET", `${userFilter(email)}&startIndex=1&count=100`)).body).toMatchObject({ totalResults: 0 });
    const created = await scim.send("POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: email,
      name: { givenName: "Ada", familyName: "Lovelace" },
      emails: [{ primary: true, value: email, type: "work" }],
      displayName: "Ada Lovelace",
      locale: "en-US",
      externalId: "00u1abcdEFGH",
      groups: [],
      password: "never-stored-1",
      active: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const row = await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id } });
    expect(row.passwordHash).toBeNull();

    const replaced = await scim.send("PUT", `/Users/${id}`, {
      schemas: [USER_SCHEMA],
      id,
      userName: email,
      name: { givenName: "Augusta Ada", familyName: "King" },
      emails: [{ primary: true, value: email, type: "work" }],
      externalId: "00u1abcdEFGH",
      active: true,
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ name: { givenName: "Augusta Ada", familyName: "King" }, active: true });
    expect(replaced.body.meta).not.toEqual(created.body.meta);

    const off = await scim.send("PATCH", `/Users/${id}`, patch({ op: "replace", value: { active: false } }));
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    const exported = await api.get<{ scimExternalId: string | null }>(`/organizations/${tenant.org.id}/users/${id}/export`);
    expect(exported.body.scimExternalId).toBe("00u1abcdEFGH");
    const byExternalId = await scim.send("GET", `/Users?filter=${encodeURIComponent('externalId eq "00u1abcdEFGH"')}`);
    expect(byExternalId.body.Resources?.map((r) => r.id)).toEqual([id]);
    expect((await scim.send("GET", `/Users?filter=${encodeURIComponent('externalId eq "00U1ABCDEFGH"')}`)).body.totalResults).toBe(0);
    const on = await scim.send("PATCH", `/Users/${id}`, patch({ op: "replace", value: { active: true } }));
    expect(on.body.active).toBe(true);

    // A new primary address added to emails becomes the user's address, and userName with it.
    const moved = `${unique("okta-new")}@example.org`;
    const added = await scim.send("PATCH", `/Users/${id}`, patch({ op: "add", path: "emails", value: [{ value: moved, type: "work", primary: true }] }));
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body).toMatchObject({ userName: moved, emails: [{ value: moved, type: "work", primary: true }] });
  });
});

describe("deprovisioning", () => {
  it("active false ends the user's sessions and tokens, through the Admin API's deactivation", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("leaver")}@example.com`, password: PASSWORD });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(200);
    const res = await scim.send("PATCH", `/Users/${user.id}`, patch({ op: "Replace", path: "active", value: false }));
    expect(res.status).toBe(200);
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    expect(await prisma.oidcPayload.count({ where: { accountId: user.id } })).toBe(0);
  });

  it("DELETE deletes the user for real: 204, then 404, sessions ended, audited as the token", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("gone")}@example.com`, password: PASSWORD });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    const res = await scim.send("DELETE", `/Users/${user.id}`);
    expect(res.status).toBe(204);
    expectScimError(await scim.send("GET", `/Users/${user.id}`), 404);
    expectScimError(await scim.send("DELETE", `/Users/${user.id}`), 404);
    expect(await prisma.user.count({ where: { id: user.id } })).toBe(0);
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    const entry = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "user.deleted", targetId: user.id } });
    expect(entry).toMatchObject({ actorType: "scim_token", actorId: tokenId, organizationId: tenant.org.id });
  });
});

describe("users", () => {
  it("refuses a duplicate userName with 409 uniqueness, whatever its case", async () => {
    const email = `${unique("dup")}@example.com`;
    expect((await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email })).status).toBe(201);
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email.toUpperCase() }), 409, "uniqueness");
    const other = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("dup2")}@example.com` });
    expectScimError(await scim.send("PATCH", `/Users/${other.body.id as string}`, patch({ op: "replace", path: "userName", value: email })), 409, "uniqueness");
  });

  it("refuses a userName that is not an email address, and userName and emails that disagree", async () => {
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: "grace.hopper" }), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: "grace.hopper", emails: [{ value: "grace@example.com", primary: true }] }), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: "a@example.com", emails: [{ value: "b@example.com", primary: true }] }), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA] }), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("x")}@example.com`, active: "maybe" }), 400, "invalidValue");
    expectScimError(await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("x")}@example.com`, name: { givenName: "x".repeat(201) } }), 400, "invalidValue");
  });

  it("pages with startIndex and count (1-based), caps count and answers totalResults", async () => {
    const org = await createTenant(porta);
    const client = scimClient(porta, org.org.slug, (await issueScimToken(api, org.org.id)).token);
    const emails = [];
    for (let i = 0; i < 5; i += 1) {
      const email = `page${i}-${unique("p")}@example.com`;
      emails.push(email);
      expect((await client.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email })).status).toBe(201);
    }
    const first = await client.send("GET", "/Users?startIndex=1&count=2");
    expect(first.body).toMatchObject({ totalResults: 5, startIndex: 1, itemsPerPage: 2 });
    const third = await client.send("GET", "/Users?startIndex=5&count=2");
    expect(third.body).toMatchObject({ totalResults: 5, startIndex: 5, itemsPerPage: 1 });
    const all = [...(first.body.Resources ?? []), ...((await client.send("GET", "/Users?startIndex=3&count=2")).body.Resources ?? []), ...(third.body.Resources ?? [])];
    expect(all.map((r) => r.userName)).toEqual(emails);
    expect((await client.send("GET", "/Users?count=0")).body).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    expect((await client.send("GET", "/Users?startIndex=-4&count=100000")).body).toMatchObject({ startIndex: 1, itemsPerPage: 5 });
    expectScimError(await client.send("GET", "/Users?count=ten"), 400, "invalidValue");
    expect((await client.send("GET", `/Users?filter=${encodeURIComponent('userName sw "page1-"')}`)).body.totalResults).toBe(1);
    expect((await client.send("GET", `/Users?filter=${encodeURIComponent('userName sw "page" and not (userName sw "page1-")')}`)).body.totalResults).toBe(4);
  });

  it("answers If-Match with the version: a stale one is 412 and writes nothing", async () => {
    const created = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `${unique("etag")}@example.com` });
    const id = created.body.id as string;
    const version = created.headers.get("etag")!;
    const changed = await scim.send("PATCH", `/Users/${id}`, patch({ op: "replace", path: "name.familyName", value: "One" }), { "if-match": version });
    expect(changed.status).toBe(200);
    expectScimError(await scim.send("PATCH", `/Users/${id}`, patch({ op: "replace", path: "name.familyName", value: "Two" }), { "if-match": version }), 412);
    expect((await scim.send("GET", `/Users/${id}`)).body.name).toEqual({ familyName: "One" });
  });
});

describe("groups", () => {
  it("renames, replaces members with PUT, takes a directory's group name with spaces, refuses one that is no role name, and DELETE deletes the role", async () => {
    const prisma = porta.services.db.prisma;
    const a = await createUser(prisma, tenant.org.id, { email: `${unique("g")}@example.com` });
    const b = await createUser(prisma, tenant.org.id, { email: `${unique("g")}@example.com` });
    const spaced = await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: `Sales Team ${unique("t")}` });
    expect(spaced.status).toBe(201);
    expect(await prisma.role.count({ where: { organizationId: tenant.org.id, name: spaced.body.displayName as string } })).toBe(1);
    for (const displayName of ["Sales  Team", " ", "-sales", "Sales/Team", "Sales\tTeam"]) {
      expectScimError(await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName }), 400, "invalidValue");
    }
    const name = unique("sales");
    const group = await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: name, members: [{ value: a.id }] });
    const id = group.body.id as string;
    expectScimError(await scim.send("POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName: name }), 409, "uniqueness");
    const renamed = await scim.send("PATCH", `/Groups/${id}`, patch({ op: "replace", value: { id, displayName: `${name}-emea` } }));
    expect(renamed.body.displayName).toBe(`${name}-emea`);
    const put = await scim.send("PUT", `/Groups/${id}`, { schemas: [GROUP_SCHEMA], displayName: `${name}-emea`, members: [{ value: b.id }] });
    expect((put.body.members as Array<{ value: string }>).map((m) => m.value)).toEqual([b.id]);
    expectScimError(await scim.send("PATCH", `/Groups/${id}`, patch({ op: "add", path: "members", value: [{ value: "00000000-0000-7000-8000-000000000000" }] })), 400, "invalidValue");
    expect((await scim.send("GET", `/Groups?filter=${encodeURIComponent(`displayName eq "${name.toUpperCase()}-EMEA"`)}`)).body.totalResults).toBe(1);
    expect((await scim.send("DELETE", `/Groups/${id}`)).status).toBe(204);
    expect(await prisma.role.count({ where: { id } })).toBe(0);
    expect(await prisma.user.count({ where: { id: { in: [a.id, b.id] } } })).toBe(2);
    const deleted = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "role.deleted", targetId: id } });
    expect(deleted).toMatchObject({ actorType: "scim_token", actorId: tokenId });
  });
});
