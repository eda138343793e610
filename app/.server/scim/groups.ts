import type { Prisma } from "~/generated/prisma/client";
import { RoleNameSchema } from "~/schemas/rbac";
import { isUuid } from "~/schemas/uuid";
import { createRole, deleteRole, updateRole } from "../admin/rbac/service";
import type { Context, StagedContext } from "../context";
import {
  invalidValue,
  mutability,
  scimNotFound,
  ScimError,
  uniqueness,
} from "./errors";
import { groupWhere, parseScimFilter } from "./filter";
import { applyPatch, operationsOf, type Doc, type Json } from "./patch";
import {
  listResponse,
  metaOf,
  optionalText,
  type Paging,
  type ScimScope,
} from "./resource";

/**
 * SCIM Groups (RFC 7643 §4.2) are the organization's roles (decision 084): `displayName` is
 * the role's name (a role name's rule applies: letters, digits, single spaces and _ . : -), `members` are the
 * users who hold it. Creating a group creates a role without permissions; deleting it deletes
 * the role and its assignments. Membership changes are audited per user, as the Admin API's
 * role assignments are.
 */
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const EXTERNAL_ID_MAX = 255;
/** Members one write may name; a larger group is built in several PATCHes. */
const MAX_MEMBERS_PER_WRITE = 1_000;

export type ScimGroupsContext = StagedContext<"config">;

const roleSelect = {
  id: true,
  organizationId: true,
  name: true,
  scimExternalId: true,
  version: true,
  createdAt: true,
  updatedAt: true,
} as const;
type RoleRow = Prisma.RoleGetPayload<{ select: typeof roleSelect }>;

const isObject = (value: unknown): value is Doc =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function attr(doc: Doc, name: string): Json | undefined {
  const key = Object.keys(doc).find(
    (k) => k.toLowerCase() === name.toLowerCase()
  );
  return key === undefined ? undefined : doc[key];
}

async function membersOf(ctx: Context, scope: ScimScope, roleIds: string[]) {
  const rows = await ctx.db.userRole.findMany({
    where: { roleId: { in: roleIds } },
    orderBy: { createdAt: "asc" },
    select: { roleId: true, user: { select: { id: true, email: true } } },
  });
  const byRole = new Map<
    string,
    Array<{ value: string; display: string; $ref: string }>
  >();
  for (const row of rows) {
    const list = byRole.get(row.roleId) ?? [];
    list.push({
      value: row.user.id,
      display: row.user.email,
      $ref: `${scope.endpoint}/Users/${row.user.id}`,
    });
    byRole.set(row.roleId, list);
  }
  return byRole;
}

function toScimGroup(
  scope: ScimScope,
  row: RoleRow,
  members: Array<{ value: string; display: string; $ref: string }> | undefined
) {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.id,
    displayName: row.name,
    ...(row.scimExternalId !== null ? { externalId: row.scimExternalId } : {}),
    ...(members !== undefined ? { members } : {}),
    meta: metaOf("Group", scope, row),
  };
}

async function represent(
  ctx: Context,
  scope: ScimScope,
  row: RoleRow,
  withMembers = true
) {
  return toScimGroup(
    scope,
    row,
    withMembers
      ? (await membersOf(ctx, scope, [row.id])).get(row.id) ?? []
      : undefined
  );
}

async function requireGroup(
  ctx: Context,
  scope: ScimScope,
  id: string
): Promise<RoleRow> {
  if (!isUuid(id)) throw scimNotFound("Group");
  const row = await ctx.db.role.findFirst({
    where: { id, organizationId: scope.organizationId },
    select: roleSelect,
  });
  if (!row) throw scimNotFound("Group");
  return row;
}

function displayNameOf(value: Json | undefined): string {
  if (typeof value !== "string")
    throw invalidValue("displayName is required and must be a string.");
  const parsed = RoleNameSchema.safeParse(value);
  if (!parsed.success)
    throw invalidValue(
      `displayName is a role name, which ${
        parsed.error.issues[0]?.message ?? "is not valid"
      }.`
    );
  return parsed.data;
}

/** The user ids `members` names; each must be a user of the organization. */
async function memberIdsOf(
  ctx: Context,
  scope: ScimScope,
  value: Json | undefined
): Promise<string[]> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidValue("members must be an array.");
  if (value.length > MAX_MEMBERS_PER_WRITE)
    throw new ScimError(
      400,
      `One request may name at most ${MAX_MEMBERS_PER_WRITE} members.`,
      "tooMany"
    );
  const ids = value.map((member, index) => {
    const id = isObject(member) ? attr(member, "value") : undefined;
    if (typeof id !== "string")
      throw invalidValue(`members[${index}].value must be a user id.`);
    return id;
  });
  const unique = [...new Set(ids)];
  const wellFormed = unique.filter(isUuid);
  const found =
    wellFormed.length === 0
      ? []
      : await ctx.db.user.findMany({
          where: {
            id: { in: wellFormed },
            organizationId: scope.organizationId,
          },
          select: { id: true },
        });
  const missing = unique.filter((id) => !found.some((f) => f.id === id));
  if (missing.length > 0)
    throw invalidValue(
      `members names ${missing.length} id(s) that are not users of this organization.`
    );
  return unique;
}

/** A change of members is a change of the group: its ETag moves on. */
async function bumpVersion(tx: Context, role: RoleRow) {
  await tx.db.role.updateMany({
    where: { id: role.id },
    data: { version: { increment: 1 } },
  });
}

async function addMembers(tx: Context, role: RoleRow, userIds: string[]) {
  if (userIds.length === 0) return;
  const held = await tx.db.userRole.findMany({
    where: { roleId: role.id, userId: { in: userIds } },
    select: { userId: true },
  });
  const added = userIds.filter((id) => !held.some((h) => h.userId === id));
  if (added.length === 0) return;
  await tx.db.userRole.createMany({
    data: added.map((userId) => ({ userId, roleId: role.id })),
    skipDuplicates: true,
  });
  await bumpVersion(tx, role);
  for (const userId of added) {
    tx.audit({
      eventType: "user.role_assigned",
      organizationId: role.organizationId,
      targetType: "user",
      targetId: userId,
      data: {
        change: { roleId: role.id, role: role.name, created: true },
        via: "scim",
      },
    });
  }
}

async function removeMembers(tx: Context, role: RoleRow, userIds: string[]) {
  if (userIds.length === 0) return;
  const held = await tx.db.userRole.findMany({
    where: { roleId: role.id, userId: { in: userIds } },
    select: { userId: true },
  });
  if (held.length === 0) return;
  await tx.db.userRole.deleteMany({
    where: { roleId: role.id, userId: { in: held.map((h) => h.userId) } },
  });
  await bumpVersion(tx, role);
  for (const { userId } of held) {
    tx.audit({
      eventType: "user.role_removed",
      organizationId: role.organizationId,
      targetType: "user",
      targetId: userId,
      data: { change: { roleId: role.id, role: role.name }, via: "scim" },
    });
  }
}

async function assertNameFree(
  ctx: Context,
  scope: ScimScope,
  name: string,
  exceptId: string | null
) {
  const taken = await ctx.db.role.findFirst({
    where: {
      organizationId: scope.organizationId,
      name,
      ...(exceptId ? { NOT: { id: exceptId } } : {}),
    },
    select: { id: true },
  });
  if (taken) throw uniqueness("A group with this displayName already exists.");
}

export async function getScimGroup(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  id: string,
  withMembers: boolean
) {
  return represent(ctx, scope, await requireGroup(ctx, scope, id), withMembers);
}

export async function listScimGroups(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  filter: string | undefined,
  paging: Paging,
  withMembers: boolean
) {
  const where: Prisma.RoleWhereInput = {
    organizationId: scope.organizationId,
    ...(filter !== undefined
      ? { AND: [groupWhere(parseScimFilter(filter))] }
      : {}),
  };
  const [total, rows] = await Promise.all([
    ctx.db.role.count({ where }),
    paging.count === 0
      ? Promise.resolve([])
      : ctx.db.role.findMany({
          where,
          select: roleSelect,
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          skip: paging.startIndex - 1,
          take: paging.count,
        }),
  ]);
  const members = withMembers
    ? await membersOf(
        ctx,
        scope,
        rows.map((r) => r.id)
      )
    : undefined;
  return listResponse(
    rows.map((row) =>
      toScimGroup(scope, row, members ? members.get(row.id) ?? [] : undefined)
    ),
    total,
    paging
  );
}

export async function createScimGroup(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  body: unknown
) {
  if (!isObject(body)) throw invalidValue("The body must be a Group resource.");
  const name = displayNameOf(attr(body, "displayName"));
  const externalId = optionalText(
    attr(body, "externalId"),
    "externalId",
    EXTERNAL_ID_MAX
  );
  return ctx.transaction(async (tx) => {
    await assertNameFree(tx, scope, name, null);
    const memberIds = await memberIdsOf(tx, scope, attr(body, "members"));
    const created = await createRole(tx, {
      organizationId: scope.organizationId,
      name,
    });
    const role = await tx.db.role.update({
      where: { id: created.id },
      data: { scimExternalId: externalId },
      select: roleSelect,
    });
    tx.audit({
      eventType: "role.created",
      organizationId: role.organizationId,
      targetType: "role",
      targetId: role.id,
      data: { change: { name, externalId }, via: "scim" },
    });
    await addMembers(tx, role, memberIds);
    return represent(tx, scope, await requireGroup(tx, scope, role.id));
  });
}

async function rename(
  tx: Context<"config">,
  role: RoleRow,
  name: string,
  externalId: string | null
): Promise<RoleRow> {
  const nameChanged = name !== role.name;
  const externalChanged = externalId !== role.scimExternalId;
  if (!nameChanged && !externalChanged) return role;
  if (nameChanged) await updateRole(tx, role.id, { name }, undefined);
  const after = await tx.db.role.update({
    where: { id: role.id },
    data: {
      scimExternalId: externalId,
      ...(nameChanged ? {} : { version: { increment: 1 } }),
    },
    select: roleSelect,
  });
  tx.audit({
    eventType: "role.updated",
    organizationId: role.organizationId,
    targetType: "role",
    targetId: role.id,
    data: {
      change: {
        ...(nameChanged ? { name } : {}),
        ...(externalChanged ? { externalId } : {}),
        via: "scim",
      },
    },
    changes: {
      before: { name: role.name, externalId: role.scimExternalId },
      after: { name: after.name, externalId: after.scimExternalId },
    },
  });
  return after;
}

function assertVersion(role: RoleRow, expectedVersion: number | undefined) {
  if (expectedVersion !== undefined && expectedVersion !== role.version)
    throw new ScimError(412, "The group changed since you read it.");
}

/** PUT: the name, the externalId and the whole member list as sent. */
export async function replaceScimGroup(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  id: string,
  body: unknown,
  expectedVersion: number | undefined
) {
  if (!isObject(body)) throw invalidValue("The body must be a Group resource.");
  const name = displayNameOf(attr(body, "displayName"));
  const externalId = optionalText(
    attr(body, "externalId"),
    "externalId",
    EXTERNAL_ID_MAX
  );
  return ctx.transaction(async (tx) => {
    const role = await requireGroup(tx, scope, id);
    assertVersion(role, expectedVersion);
    if (name !== role.name) await assertNameFree(tx, scope, name, role.id);
    const wanted = await memberIdsOf(tx, scope, attr(body, "members"));
    const current = (
      await tx.db.userRole.findMany({
        where: { roleId: role.id },
        select: { userId: true },
      })
    ).map((r) => r.userId);
    const after = await rename(tx, role, name, externalId);
    await addMembers(
      tx,
      after,
      wanted.filter((userId) => !current.includes(userId))
    );
    await removeMembers(
      tx,
      after,
      current.filter((userId) => !wanted.includes(userId))
    );
    return represent(tx, scope, await requireGroup(tx, scope, id));
  });
}

/**
 * PATCH. Members are changed without reading the whole list: an operation on `members` adds or
 * removes the users it names (a `replace` sets the list); the other attributes go through the
 * common patch of a document.
 */
export async function patchScimGroup(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  id: string,
  body: unknown,
  expectedVersion: number | undefined
) {
  const operations = operationsOf(body);
  return ctx.transaction(async (tx) => {
    const role = await requireGroup(tx, scope, id);
    assertVersion(role, expectedVersion);
    let doc: Doc = {
      displayName: role.name,
      ...(role.scimExternalId !== null
        ? { externalId: role.scimExternalId }
        : {}),
    };
    for (const operation of operations) {
      const path = operation.path?.trim();
      const membersPath =
        path === undefined
          ? undefined
          : /^(?:urn:ietf:params:scim:schemas:core:2\.0:group:)?members(?:\[(.*)\])?$/i.exec(
              path
            );
      if (membersPath) {
        if (operation.op === "remove") {
          const filtered = membersPath[1];
          if (filtered !== undefined) {
            const match = /^\s*value\s+eq\s+"([^"\\]*)"\s*$/i.exec(filtered);
            if (!match)
              throw new ScimError(
                400,
                "members may be filtered by value eq only.",
                "invalidFilter"
              );
            await removeMembers(tx, role, isUuid(match[1]!) ? [match[1]!] : []);
          } else if (operation.value !== undefined) {
            await removeMembers(
              tx,
              role,
              await memberIdsOf(
                tx,
                scope,
                Array.isArray(operation.value)
                  ? operation.value
                  : [operation.value]
              )
            );
          } else {
            await removeMembers(
              tx,
              role,
              (
                await tx.db.userRole.findMany({
                  where: { roleId: role.id },
                  select: { userId: true },
                })
              ).map((r) => r.userId)
            );
          }
        } else {
          if (membersPath[1] !== undefined)
            throw new ScimError(
              400,
              `${operation.op} on members takes no value filter.`,
              "invalidPath"
            );
          const ids = await memberIdsOf(
            tx,
            scope,
            Array.isArray(operation.value)
              ? operation.value
              : [operation.value ?? null]
          );
          if (operation.op === "replace") {
            const current = (
              await tx.db.userRole.findMany({
                where: { roleId: role.id },
                select: { userId: true },
              })
            ).map((r) => r.userId);
            await removeMembers(
              tx,
              role,
              current.filter((userId) => !ids.includes(userId))
            );
          }
          await addMembers(tx, role, ids);
        }
        continue;
      }
      if (path === undefined && isObject(operation.value)) {
        // Okta's path-less form may carry members beside the other attributes.
        const { members, ...rest } = Object.fromEntries(
          Object.entries(operation.value).map(([k, v]) => [
            k.toLowerCase() === "members" ? "members" : k,
            v,
          ])
        );
        if (members !== undefined) {
          const ids = await memberIdsOf(tx, scope, members);
          if (operation.op === "replace") {
            const current = (
              await tx.db.userRole.findMany({
                where: { roleId: role.id },
                select: { userId: true },
              })
            ).map((r) => r.userId);
            await removeMembers(
              tx,
              role,
              current.filter((userId) => !ids.includes(userId))
            );
          }
          await addMembers(tx, role, ids);
        }
        const withoutId = Object.fromEntries(
          Object.entries(rest).filter(([k]) => k.toLowerCase() !== "id")
        );
        doc = applyPatch(
          doc,
          [{ op: operation.op, value: withoutId }],
          GROUP_SCHEMA
        );
        continue;
      }
      doc = applyPatch(doc, [operation], GROUP_SCHEMA);
    }
    if (attr(doc, "displayName") === undefined)
      throw mutability("displayName is required and cannot be removed.");
    const name = displayNameOf(attr(doc, "displayName"));
    if (name !== role.name) await assertNameFree(tx, scope, name, role.id);
    await rename(
      tx,
      await requireGroup(tx, scope, id),
      name,
      optionalText(attr(doc, "externalId"), "externalId", EXTERNAL_ID_MAX)
    );
    return represent(tx, scope, await requireGroup(tx, scope, id));
  });
}

export async function deleteScimGroup(
  ctx: ScimGroupsContext,
  scope: ScimScope,
  id: string,
  expectedVersion: number | undefined
) {
  await ctx.transaction(async (tx) => {
    const role = await requireGroup(tx, scope, id);
    assertVersion(role, expectedVersion);
    const members = await tx.db.userRole.count({ where: { roleId: role.id } });
    await deleteRole(tx, role.id, undefined);
    tx.audit({
      eventType: "role.deleted",
      organizationId: role.organizationId,
      targetType: "role",
      targetId: role.id,
      data: { change: { name: role.name }, members, via: "scim" },
    });
  });
}
