import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PERMISSIONS } from "~/.server/admin/permissions";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import {
  BAD_CURSOR,
  createTenant,
  dataFingerprint,
  expect422,
  expectError,
  FORGED_CURSOR,
  OVERSIZE,
  PASSWORD,
  signIn,
  unique,
  type BadRequest,
  type Tenant,
} from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Roles, permissions and user-role assignments through the Admin API: every operation, the
 * organization boundary (a role holds permissions of its organization, a user roles of theirs),
 * ETags on roles, the protected admin role, and 422 for bad input that writes nothing.
 */
interface Permission {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  createdAt: string;
}
interface Role {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  permissions: Array<{ id: string; name: string }>;
  createdAt: string;
  updatedAt: string;
}
interface UserRole {
  id: string;
  name: string;
  organizationId: string;
  assignedAt: string;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;
let other: Tenant;
let superOrgId: string;
let adminId: string;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  other = await createTenant(porta);
  const prisma = porta.services.db.prisma;
  superOrgId = (await prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } })).id;
  adminId = (await prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
});
afterAll(async () => {
  await porta?.stop();
});

const newPermission = (t: Tenant, name = unique("docs:read"), description?: string) =>
  api.post<Permission>("/permissions", { organizationId: t.org.id, name, ...(description ? { description } : {}) });
const newRole = (t: Tenant, body: Record<string, unknown> = {}) => api.post<Role>("/roles", { organizationId: t.org.id, name: unique("role"), ...body });

describe("permissions", () => {
  it("creates, gets, lists (offset, cursor, search) and deletes permissions of an organization", async () => {
    const t = await createTenant(porta);
    const created: Permission[] = [];
    for (const name of ["reports:read", "reports:write", "billing:read", "billing:write", "users.invite"]) {
      const res = await newPermission(t, name, `Allows ${name}`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ organizationId: t.org.id, name, description: `Allows ${name}` });
      created.push(res.body);
    }
    const got = await api.get<Permission>(`/permissions/${created[0]!.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created[0]);

    const page = await api.get<Page<Permission>>(`/permissions?organizationId=${t.org.id}&page=1&pageSize=2`);
    expect(page.body).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    // Offset mode sorts by name.
    expect(page.body.data.map((p) => p.name)).toEqual(["billing:read", "billing:write"]);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.get<Page<Permission>>(`/permissions?organizationId=${t.org.id}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((p) => p.id));
      cursor = res.body.cursor;
    } while (cursor);
    expect(seen).toEqual(created.map((p) => p.id));
    const search = await api.get<Page<Permission>>(`/permissions?organizationId=${t.org.id}&q=BILLING`);
    expect(search.body.data.map((p) => p.name)).toEqual(["billing:read", "billing:write"]);
    // Another organization's list does not show them.
    expect((await api.get<Page<Permission>>(`/permissions?organizationId=${other.org.id}&q=billing`)).body.total).toBe(0);

    const del = await api.delete(`/permissions/${created[0]!.id}`);
    expect(del.status).toBe(204);
    expectError(await api.get(`/permissions/${created[0]!.id}`), 404, "not_found");
    expectError(await api.delete(`/permissions/${created[0]!.id}`), 404);
    const audits = await porta.services.db.prisma.auditEntry.findMany({ where: { targetType: "permission", targetId: created[0]!.id }, orderBy: { id: "asc" } });
    expect(audits.map((a) => a.eventType)).toEqual(["permission.created", "permission.deleted"]);
  });

  it("answers 409 for a duplicate name in one organization, allows it in another, and 404 for an unknown organization", async () => {
    const name = unique("dup:perm");
    expect((await newPermission(tenant, name)).status).toBe(201);
    expectError(await newPermission(tenant, name), 409, "duplicate");
    expect((await newPermission(other, name)).status).toBe(201);
    expectError(await api.post("/permissions", { organizationId: "00000000-0000-4000-8000-000000000000", name: "x" }), 404);
    expectError(await api.get("/permissions?organizationId=00000000-0000-4000-8000-000000000000"), 404);
  });

  it("deleting a permission takes it from every role; the Admin API's own permissions are protected", async () => {
    const permission = (await newPermission(tenant)).body;
    const role = (await newRole(tenant, { permissionIds: [permission.id] })).body;
    expect(role.permissions.map((p) => p.id)).toEqual([permission.id]);
    expect((await api.delete(`/permissions/${permission.id}`)).status).toBe(204);
    const after = await api.get<Role>(`/roles/${role.id}`);
    expect(after.body.permissions).toEqual([]);
    expect(after.headers.get("etag")).toBe('"v2"');

    const adminPermission = await porta.services.db.prisma.permission.findFirstOrThrow({ where: { organizationId: superOrgId, name: "admin:user:read" } });
    expectError(await api.delete(`/permissions/${adminPermission.id}`), 409, "protected_permission");
  });
});

describe("roles", () => {
  it("creates with permissions, gets with an ETag, lists and updates with If-Match", async () => {
    const read = (await newPermission(tenant, unique("articles:read"))).body;
    const write = (await newPermission(tenant, unique("articles:write"))).body;
    const name = unique("editor");
    const created = await api.post<Role>("/roles", { organizationId: tenant.org.id, name, description: "Edits articles", permissionIds: [read.id, write.id] });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBe('"v1"');
    expect(created.body).toMatchObject({ organizationId: tenant.org.id, name, description: "Edits articles" });
    expect(created.body.permissions.map((p) => p.name).sort()).toEqual([read.name, write.name].sort());

    const got = await api.get<Role>(`/roles/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.headers.get("etag")).toBe('"v1"');
    expect(got.body).toEqual(created.body);

    const list = await api.get<Page<Role>>(`/roles?organizationId=${tenant.org.id}&q=${name}`);
    expect(list.body.total).toBe(1);
    expect(list.body.data[0]!.id).toBe(created.body.id);
    const cursorList = await api.get<Page<Role>>(`/roles?organizationId=${tenant.org.id}&limit=1`);
    expect(cursorList.body.data).toHaveLength(1);
    expect(typeof cursorList.body.cursor).toBe("string");
    const next = await api.get<Page<Role>>(`/roles?organizationId=${tenant.org.id}&limit=1&cursor=${cursorList.body.cursor}`);
    expect(next.body.data[0]!.id).not.toBe(cursorList.body.data[0]!.id);

    const [a, b] = await Promise.all([
      api.put<Role>(`/roles/${created.body.id}`, { description: "A" }, { "if-match": '"v1"' }),
      api.put<Role>(`/roles/${created.body.id}`, { description: "B" }, { "if-match": '"v1"' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expectError(a.status === 409 ? a : b, 409, "etag_mismatch");
    const renamed = await api.put<Role>(`/roles/${created.body.id}`, { name: `${name}-2`, description: null }, { "if-match": '"v2"' });
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get("etag")).toBe('"v3"');
    expect(renamed.body).toMatchObject({ name: `${name}-2`, description: null });
    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { targetType: "role", targetId: created.body.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["role.created", "role.updated", "role.updated"]);
  });

  it("keeps roles within their organization: duplicate name 409, foreign permission 422, unknown role 404", async () => {
    const role = (await newRole(tenant)).body;
    expectError(await newRole(tenant, { name: role.name }), 409, "duplicate");
    expect((await newRole(other, { name: role.name })).status).toBe(201);
    const foreign = (await newPermission(other)).body;
    const before = await dataFingerprint(porta);
    expect422(await newRole(tenant, { permissionIds: [foreign.id] }), "permissionIds.0");
    expect422(await api.put(`/roles/${role.id}/permissions/${foreign.id}`), "permissionId");
    expect(await dataFingerprint(porta)).toEqual(before);
    expectError(await api.get("/roles/00000000-0000-4000-8000-000000000000"), 404, "not_found");
    expectError(await api.put("/roles/00000000-0000-4000-8000-000000000000", { description: "x" }), 404);
    const other2 = (await newRole(tenant)).body;
    expectError(await api.put(`/roles/${other2.id}`, { name: role.name }), 409, "duplicate");
  });

  it("assigns (idempotently) and removes permissions; the role's version moves", async () => {
    const role = (await newRole(tenant)).body;
    const permission = (await newPermission(tenant)).body;
    const path = `/roles/${role.id}/permissions/${permission.id}`;
    const assigned = await api.put<Role>(path);
    expect(assigned.status).toBe(200);
    expect(assigned.headers.get("etag")).toBe('"v2"');
    expect(assigned.body.permissions).toEqual([{ id: permission.id, name: permission.name }]);
    const again = await api.put<Role>(path);
    expect(again.status).toBe(200);
    expect(again.body.permissions).toHaveLength(1);
    expectError(await api.put(path, undefined, { "if-match": '"v1"' }), 409, "etag_mismatch");
    expectError(await api.put(`/roles/${role.id}/permissions/00000000-0000-4000-8000-000000000000`), 404);

    const removed = await api.delete(path);
    expect(removed.status).toBe(204);
    expect((await api.get<Role>(`/roles/${role.id}`)).body.permissions).toEqual([]);
    expectError(await api.delete(path), 404, "not_found");
    const events = await porta.services.db.prisma.auditEntry.findMany({ where: { targetType: "role", targetId: role.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["role.created", "role.permission_assigned", "role.permission_assigned", "role.permission_removed"]);
  });

  it("protects the service-admin role of the super-admin organization", async () => {
    const role = await porta.services.db.prisma.role.findFirstOrThrow({ where: { organizationId: superOrgId, name: "service-admin" }, include: { permissions: { include: { permission: true } } } });
    expect(role.permissions.map((p) => p.permission.name).sort()).toEqual([...ADMIN_PERMISSIONS].sort());
    expectError(await api.put(`/roles/${role.id}`, { name: "renamed" }), 409, "protected_role");
    const one = role.permissions[0]!.permission;
    expectError(await api.delete(`/roles/${role.id}/permissions/${one.id}`), 409, "protected_role");
    // Its description may change.
    expect((await api.put(`/roles/${role.id}`, { description: "Everything" })).status).toBe(200);
  });
});

describe("user roles", () => {
  it("lists, assigns and removes a user's roles; effective permissions follow; the roles claim shows them", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("ur")}@example.com`, password: PASSWORD });
    const read = (await newPermission(tenant, unique("wiki:read"))).body;
    const write = (await newPermission(tenant, unique("wiki:write"))).body;
    const reader = (await newRole(tenant, { name: unique("reader"), permissionIds: [read.id] })).body;
    const writer = (await newRole(tenant, { name: unique("writer"), permissionIds: [read.id, write.id] })).body;

    expect((await api.get<{ data: UserRole[] }>(`/users/${user.id}/roles`)).body).toEqual({ data: [] });
    const first = await api.put<{ data: UserRole[] }>(`/users/${user.id}/roles/${reader.id}`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((r) => r.name)).toEqual([reader.name]);
    expect((await api.put(`/users/${user.id}/roles/${reader.id}`)).status).toBe(200);
    await api.put(`/users/${user.id}/roles/${writer.id}`);
    const list = await api.get<{ data: UserRole[] }>(`/users/${user.id}/roles`);
    expect(list.body.data.map((r) => r.name)).toEqual([reader.name, writer.name]);
    expect(list.body.data[0]).toMatchObject({ id: reader.id, organizationId: tenant.org.id });

    const effective = await api.get<{ userId: string; roles: string[]; permissions: Array<{ name: string; grantedBy: string[] }> }>(`/users/${user.id}/effective-permissions`);
    expect(effective.status).toBe(200);
    expect(effective.body.userId).toBe(user.id);
    expect(effective.body.roles).toEqual([reader.name, writer.name].sort());
    expect(effective.body.permissions).toEqual([
      expect.objectContaining({ name: read.name, grantedBy: [reader.name, writer.name].sort() }),
      expect.objectContaining({ name: write.name, grantedBy: [writer.name] }),
    ]);

    // The assignment reaches the tokens: the roles claim lists both roles.
    const tokens = await signIn(tenant, { email: user.email, password: PASSWORD }, "openid roles");
    const info = await oidc.fetchUserInfo(tokens.config, tokens.accessToken, oidc.skipSubjectCheck);
    expect(info.roles).toEqual([reader.name, writer.name].sort());

    expect((await api.delete(`/users/${user.id}/roles/${writer.id}`)).status).toBe(204);
    expectError(await api.delete(`/users/${user.id}/roles/${writer.id}`), 404, "not_found");
    const after = await api.get<{ permissions: Array<{ name: string }> }>(`/users/${user.id}/effective-permissions`);
    expect(after.body.permissions.map((p) => p.name)).toEqual([read.name]);
    const events = await prisma.auditEntry.findMany({ where: { targetType: "user", targetId: user.id, actorType: "admin" }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["user.role_assigned", "user.role_assigned", "user.role_assigned", "user.role_removed"]);
  });

  it("a role of another organization is 422; unknown user or role is 404; the admin keeps their own service-admin role", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("x")}@example.com` });
    const foreign = (await newRole(other)).body;
    const before = await dataFingerprint(porta);
    expect422(await api.put(`/users/${user.id}/roles/${foreign.id}`), "roleId");
    expect(await dataFingerprint(porta)).toEqual(before);
    expectError(await api.put(`/users/${user.id}/roles/00000000-0000-4000-8000-000000000000`), 404);
    expectError(await api.put(`/users/00000000-0000-4000-8000-000000000000/roles/${foreign.id}`), 404);
    expectError(await api.get("/users/00000000-0000-4000-8000-000000000000/roles"), 404);
    expectError(await api.get("/users/00000000-0000-4000-8000-000000000000/effective-permissions"), 404);
    const serviceAdmin = await porta.services.db.prisma.role.findFirstOrThrow({ where: { organizationId: superOrgId, name: "service-admin" } });
    expectError(await api.delete(`/users/${adminId}/roles/${serviceAdmin.id}`), 409, "self_modification");
    const effective = await api.get<{ permissions: Array<{ name: string }> }>(`/users/${adminId}/effective-permissions`);
    expect(effective.body.permissions.map((p) => p.name).sort()).toEqual([...ADMIN_PERMISSIONS].sort());
  });
});

describe("bad input", () => {
  it("answers 422 with field details for every route and writes nothing", async () => {
    const role = (await newRole(tenant)).body;
    const permission = (await newPermission(tenant)).body;
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("bad")}@example.com` });
    const org = tenant.org.id;
    const cases: BadRequest[] = [
      // GET,POST /roles
      { label: "roles list: no organizationId", method: "GET", path: "/roles", field: "query.organizationId" },
      { label: "roles list: organizationId not a UUID", method: "GET", path: "/roles?organizationId=acme", field: "query.organizationId" },
      { label: "roles list: page a word", method: "GET", path: `/roles?organizationId=${org}&page=first`, field: "query.page" },
      { label: "roles list: unknown parameter", method: "GET", path: `/roles?organizationId=${org}&sort=name`, field: "query.sort" },
      { label: "roles list: oversize q", method: "GET", path: `/roles?organizationId=${org}&q=${"q".repeat(201)}`, field: "query.q" },
      { label: "roles list: invalid cursor", method: "GET", path: `/roles?organizationId=${org}&cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "roles list: forged cursor", method: "GET", path: `/roles?organizationId=${org}&cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "roles create: no name", method: "POST", path: "/roles", body: { organizationId: org }, field: "name" },
      { label: "roles create: no organizationId", method: "POST", path: "/roles", body: { name: "r" }, field: "organizationId" },
      { label: "roles create: name a number", method: "POST", path: "/roles", body: { organizationId: org, name: 7 }, field: "name" },
      { label: "roles create: oversize name", method: "POST", path: "/roles", body: { organizationId: org, name: OVERSIZE }, field: "name" },
      { label: "roles create: name with two spaces in a row", method: "POST", path: "/roles", body: { organizationId: org, name: "two  words" }, field: "name" },
      { label: "roles create: name with a slash", method: "POST", path: "/roles", body: { organizationId: org, name: "sales/emea" }, field: "name" },
      { label: "roles create: oversize description", method: "POST", path: "/roles", body: { organizationId: org, name: "r1", description: OVERSIZE }, field: "description" },
      { label: "roles create: permissionIds not UUIDs", method: "POST", path: "/roles", body: { organizationId: org, name: "r1", permissionIds: ["p"] }, field: "permissionIds.0" },
      { label: "roles create: unknown field", method: "POST", path: "/roles", body: { organizationId: org, name: "r1", users: [] }, field: "users" },
      // GET,PUT /roles/{id}
      { label: "role get: id not a UUID", method: "GET", path: "/roles/admin", field: "path.id" },
      { label: "role get: unknown parameter", method: "GET", path: `/roles/${role.id}?expand=1`, field: "query.expand" },
      { label: "role update: id not a UUID", method: "PUT", path: "/roles/admin", body: { description: "x" }, field: "path.id" },
      { label: "role update: name empty", method: "PUT", path: `/roles/${role.id}`, body: { name: "" }, field: "name" },
      { label: "role update: description a number", method: "PUT", path: `/roles/${role.id}`, body: { description: 5 }, field: "description" },
      { label: "role update: organizationId not movable", method: "PUT", path: `/roles/${role.id}`, body: { organizationId: other.org.id }, field: "organizationId" },
      // PUT,DELETE /roles/{id}/permissions/{permissionId}
      { label: "assign: permissionId not a UUID", method: "PUT", path: `/roles/${role.id}/permissions/read`, field: "path.permissionId" },
      { label: "assign: id not a UUID", method: "PUT", path: `/roles/r/permissions/${permission.id}`, field: "path.id" },
      { label: "remove: permissionId not a UUID", method: "DELETE", path: `/roles/${role.id}/permissions/read`, field: "path.permissionId" },
      // GET,POST /permissions
      { label: "permissions list: no organizationId", method: "GET", path: "/permissions", field: "query.organizationId" },
      { label: "permissions list: limit too big", method: "GET", path: `/permissions?organizationId=${org}&limit=101`, field: "query.limit" },
      { label: "permissions list: invalid cursor", method: "GET", path: `/permissions?organizationId=${org}&cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "permissions list: unknown order", method: "GET", path: `/permissions?organizationId=${org}&order=random`, field: "query.order" },
      { label: "permissions create: no name", method: "POST", path: "/permissions", body: { organizationId: org }, field: "name" },
      { label: "permissions create: oversize name", method: "POST", path: "/permissions", body: { organizationId: org, name: OVERSIZE }, field: "name" },
      { label: "permissions create: name a list", method: "POST", path: "/permissions", body: { organizationId: org, name: ["a"] }, field: "name" },
      { label: "permissions create: organizationId a number", method: "POST", path: "/permissions", body: { organizationId: 1, name: "a" }, field: "organizationId" },
      { label: "permissions create: unknown field", method: "POST", path: "/permissions", body: { organizationId: org, name: "a", roles: [] }, field: "roles" },
      // GET,DELETE /permissions/{id}
      { label: "permission get: id not a UUID", method: "GET", path: "/permissions/p", field: "path.id" },
      { label: "permission delete: id not a UUID", method: "DELETE", path: "/permissions/p", field: "path.id" },
      // user roles
      { label: "user roles: id not a UUID", method: "GET", path: "/users/u/roles", field: "path.id" },
      { label: "user roles: unknown parameter", method: "GET", path: `/users/${user.id}/roles?page=1`, field: "query.page" },
      { label: "assign role: roleId not a UUID", method: "PUT", path: `/users/${user.id}/roles/admin`, field: "path.roleId" },
      { label: "remove role: id not a UUID", method: "DELETE", path: `/users/u/roles/${role.id}`, field: "path.id" },
      { label: "effective permissions: id not a UUID", method: "GET", path: "/users/u/effective-permissions", field: "path.id" },
    ];
    const before = await dataFingerprint(porta);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
  });
});
