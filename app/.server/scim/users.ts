import type { Prisma, User as UserRow } from "~/generated/prisma/client";
import { isEmailAddress } from "~/schemas/email";
import { isUuid } from "~/schemas/uuid";
import {
  activateUser,
  createUser,
  deactivateUser,
  deleteUser,
  toUser,
  updateUser,
} from "../admin/users/service";
import type { Context, StagedContext } from "../context";
import {
  invalidValue,
  mutability,
  scimNotFound,
  ScimError,
  uniqueness,
} from "./errors";
import { parseScimFilter, userWhere } from "./filter";
import { applyPatch, operationsOf, type Doc, type Json } from "./patch";
import {
  listResponse,
  metaOf,
  optionalText,
  type Paging,
  type ScimScope,
} from "./resource";

/**
 * SCIM Users (RFC 7643 §4.1) are the organization's users. `userName` is the user's email
 * address, lower-cased: a userName that is not an address is refused (decision 084), and the
 * one `emails` value (type work, primary) is the same address. `active` is the status;
 * `externalId` is kept as the provisioning client sent it. Every write goes through the Admin
 * API's user service (so deactivation and deletion end the user's sessions there), in one
 * transaction with its audit entry, acting as the SCIM token.
 */
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const NAME_MAX = 200;
const EXTERNAL_ID_MAX = 255;

export type ScimUsersContext = StagedContext<
  "settings" | "passwords" | "cache" | "store" | "logoutNotices"
>;

function displayNameOf(row: UserRow): string {
  return [row.givenName, row.familyName].filter(Boolean).join(" ") || row.email;
}

/** The document PATCH starts from: the representation without what the server alone sets. */
function documentOf(row: UserRow): Doc {
  return {
    userName: row.email,
    ...(row.scimExternalId !== null ? { externalId: row.scimExternalId } : {}),
    name: {
      ...(row.givenName !== null ? { givenName: row.givenName } : {}),
      ...(row.familyName !== null ? { familyName: row.familyName } : {}),
    },
    emails: [{ value: row.email, type: "work", primary: true }],
    active: row.status === "active",
  };
}

export function toScimUser(scope: ScimScope, row: UserRow) {
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...documentOf(row),
    displayName: displayNameOf(row),
    meta: metaOf("User", scope, row),
  };
}

/** What a user becomes from a POST or PUT body, or a patched document. */
interface UserInput {
  email: string;
  givenName: string | null;
  familyName: string | null;
  externalId: string | null;
  /** Undefined: left as it is (a PUT without `active` does not deprovision). */
  active: boolean | undefined;
}

const isObject = (value: unknown): value is Doc =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Reads an attribute by its case-insensitive name. */
function attr(doc: Doc, name: string): Json | undefined {
  const key = Object.keys(doc).find(
    (k) => k.toLowerCase() === name.toLowerCase()
  );
  return key === undefined ? undefined : doc[key];
}

/** Entra ID sends booleans as the strings "True" and "False". */
function booleanOf(
  value: Json | undefined,
  attribute: string
): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value))
    return value.toLowerCase() === "true";
  throw invalidValue(`${attribute} must be true or false.`);
}

/** The address `emails` names: the primary one, else the work one, else the only one. */
function emailsValue(value: Json | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidValue("emails must be an array.");
  const entries = value.filter(isObject);
  if (entries.length !== value.length)
    throw invalidValue("Each value of emails must be an object.");
  const chosen =
    entries.find(
      (e) => booleanOf(attr(e, "primary"), "emails.primary") === true
    ) ??
    entries.find(
      (e) => String(attr(e, "type") ?? "").toLowerCase() === "work"
    ) ??
    (entries.length === 1 ? entries[0] : undefined);
  if (chosen === undefined)
    return entries.length === 0 ? undefined : invalidEmails();
  const address = attr(chosen, "value");
  if (typeof address !== "string")
    throw invalidValue("emails.value must be a string.");
  return address.trim().toLowerCase();
}

const invalidEmails = (): never => {
  throw invalidValue(
    "emails must mark one address as primary or of type work: a Porta user has one address."
  );
};

function emailOf(value: string, attribute: string): string {
  const address = value.trim().toLowerCase();
  if (!isEmailAddress(address))
    throw invalidValue(
      `${attribute} must be an email address: a Porta user's userName is the address they sign in with.`
    );
  return address;
}

/**
 * Reads a resource body (or a patched document). `current` is the address the user has: an
 * attribute equal to it did not change, so a patch of `emails` changes the address (and the
 * userName with it), and userName and emails that both change must agree.
 */
export function userInputOf(doc: Doc, current: string | null): UserInput {
  const userName = attr(doc, "userName");
  if (typeof userName !== "string" || userName.trim() === "")
    throw invalidValue("userName is required and must be a string.");
  const fromUserName = emailOf(userName, "userName");
  const listed = emailsValue(attr(doc, "emails"));
  const fromEmails =
    listed === undefined ? undefined : emailOf(listed, "emails.value");
  let email = fromUserName;
  if (fromEmails !== undefined && fromEmails !== fromUserName) {
    const userNameChanged = fromUserName !== current;
    const emailsChanged = fromEmails !== current;
    if (userNameChanged && emailsChanged)
      throw invalidValue(
        "userName and the primary email differ: a Porta user has one address, which is both."
      );
    if (emailsChanged) email = fromEmails;
  }
  const name = attr(doc, "name");
  if (name !== undefined && name !== null && !isObject(name))
    throw invalidValue("name must be an object.");
  return {
    email,
    givenName: optionalText(
      isObject(name) ? attr(name, "givenName") : undefined,
      "name.givenName",
      NAME_MAX
    ),
    familyName: optionalText(
      isObject(name) ? attr(name, "familyName") : undefined,
      "name.familyName",
      NAME_MAX
    ),
    externalId: optionalText(
      attr(doc, "externalId"),
      "externalId",
      EXTERNAL_ID_MAX
    ),
    active: booleanOf(attr(doc, "active"), "active"),
  };
}

async function requireScimUser(
  ctx: Context,
  scope: ScimScope,
  id: string
): Promise<UserRow> {
  if (!isUuid(id)) throw scimNotFound("User");
  const row = await ctx.db.user.findFirst({
    where: { id, organizationId: scope.organizationId },
  });
  if (!row) throw scimNotFound("User");
  return row;
}

async function assertAddressFree(
  ctx: Context,
  scope: ScimScope,
  email: string,
  exceptId: string | null
) {
  const taken = await ctx.db.user.findFirst({
    where: {
      organizationId: scope.organizationId,
      email,
      ...(exceptId ? { NOT: { id: exceptId } } : {}),
    },
    select: { id: true },
  });
  if (taken) throw uniqueness("A user with this userName already exists.");
}

export async function getScimUser(
  ctx: ScimUsersContext,
  scope: ScimScope,
  id: string
) {
  return toScimUser(scope, await requireScimUser(ctx, scope, id));
}

export async function listScimUsers(
  ctx: ScimUsersContext,
  scope: ScimScope,
  filter: string | undefined,
  paging: Paging
) {
  const where: Prisma.UserWhereInput = {
    organizationId: scope.organizationId,
    ...(filter !== undefined
      ? { AND: [userWhere(parseScimFilter(filter))] }
      : {}),
  };
  const [total, rows] = await Promise.all([
    ctx.db.user.count({ where }),
    paging.count === 0
      ? Promise.resolve([])
      : ctx.db.user.findMany({
          where,
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          skip: paging.startIndex - 1,
          take: paging.count,
        }),
  ]);
  return listResponse(
    rows.map((row) => toScimUser(scope, row)),
    total,
    paging
  );
}

export async function createScimUser(
  ctx: ScimUsersContext,
  scope: ScimScope,
  body: unknown
) {
  if (!isObject(body)) throw invalidValue("The body must be a User resource.");
  const input = userInputOf(body, null);
  return ctx.transaction(async (tx) => {
    await assertAddressFree(tx, scope, input.email, null);
    const created = await createUser(tx, scope.organizationId, {
      email: input.email,
      ...(input.givenName ? { givenName: input.givenName } : {}),
      ...(input.familyName ? { familyName: input.familyName } : {}),
    });
    const row =
      input.externalId !== null
        ? await tx.db.user.update({
            where: { id: created.id },
            data: { scimExternalId: input.externalId },
          })
        : created;
    tx.audit({
      eventType: "user.created",
      organizationId: row.organizationId,
      targetType: "user",
      targetId: row.id,
      data: { change: { ...changeOf(input), via: "scim" } },
    });
    if (input.active === false)
      return toScimUser(scope, await deactivate(tx, row));
    return toScimUser(scope, row);
  });
}

/** What the audit entry records of a SCIM write: the attributes, never more. */
const changeOf = (input: UserInput) => ({
  email: input.email,
  givenName: input.givenName,
  familyName: input.familyName,
  externalId: input.externalId,
  ...(input.active !== undefined ? { active: input.active } : {}),
});

async function deactivate(
  tx: Context<"cache" | "store" | "logoutNotices">,
  row: UserRow
): Promise<UserRow> {
  // The token is no user: no account can be its own, so the admin service's self-check never applies.
  const after = await deactivateUser(tx, row, "", undefined);
  tx.audit({
    eventType: "user.deactivated",
    organizationId: row.organizationId,
    targetType: "user",
    targetId: row.id,
    data: { change: { active: false }, via: "scim" },
  });
  return after;
}

/** Applies what changed between the stored user and `input`, each change with its audit entry. */
async function writeChanges(
  tx: Context<"cache" | "store" | "logoutNotices">,
  scope: ScimScope,
  user: UserRow,
  input: UserInput,
  expectedVersion: number | undefined
): Promise<UserRow> {
  let row = user;
  const profile = {
    ...(input.email !== user.email ? { email: input.email } : {}),
    ...(input.givenName !== user.givenName
      ? { givenName: input.givenName }
      : {}),
    ...(input.familyName !== user.familyName
      ? { familyName: input.familyName }
      : {}),
  };
  const externalChanged = input.externalId !== user.scimExternalId;
  if (expectedVersion !== undefined && expectedVersion !== user.version)
    throw new ScimError(412, "The user changed since you read it.");
  if (profile.email !== undefined)
    await assertAddressFree(tx, scope, profile.email, user.id);
  if (Object.keys(profile).length > 0 || externalChanged) {
    row = await updateUser(tx, row, profile, undefined);
    if (externalChanged)
      row = await tx.db.user.update({
        where: { id: row.id },
        data: { scimExternalId: input.externalId },
      });
    tx.audit({
      eventType: "user.updated",
      organizationId: row.organizationId,
      targetType: "user",
      targetId: row.id,
      data: {
        change: {
          ...profile,
          ...(externalChanged ? { externalId: input.externalId } : {}),
          via: "scim",
        },
      },
      changes: {
        before: { ...toUser(user), externalId: user.scimExternalId },
        after: { ...toUser(row), externalId: row.scimExternalId },
      },
    });
  }
  if (input.active === false && row.status === "active")
    row = await deactivate(tx, row);
  if (input.active === true && row.status !== "active") {
    row = await activateUser(tx, row, undefined);
    tx.audit({
      eventType: "user.activated",
      organizationId: row.organizationId,
      targetType: "user",
      targetId: row.id,
      data: { change: { active: true }, via: "scim" },
    });
  }
  return row;
}

export async function replaceScimUser(
  ctx: ScimUsersContext,
  scope: ScimScope,
  id: string,
  body: unknown,
  expectedVersion: number | undefined
) {
  if (!isObject(body)) throw invalidValue("The body must be a User resource.");
  return ctx.transaction(async (tx) => {
    const user = await requireScimUser(tx, scope, id);
    const input = userInputOf(body, user.email);
    return toScimUser(
      scope,
      await writeChanges(tx, scope, user, input, expectedVersion)
    );
  });
}

export async function patchScimUser(
  ctx: ScimUsersContext,
  scope: ScimScope,
  id: string,
  body: unknown,
  expectedVersion: number | undefined
) {
  const operations = operationsOf(body);
  return ctx.transaction(async (tx) => {
    const user = await requireScimUser(tx, scope, id);
    const patched = applyPatch(documentOf(user), operations, USER_SCHEMA);
    if (attr(patched, "userName") === undefined)
      throw mutability("userName is required and cannot be removed.");
    const input = userInputOf(patched, user.email);
    return toScimUser(
      scope,
      await writeChanges(tx, scope, user, input, expectedVersion)
    );
  });
}

/**
 * DELETE removes the user for real (RFC 7644 §3.6: the resource is gone), through the Admin
 * API's deletion, which ends their sessions; the audit entry keeps who and what. Entra ID and
 * Okta deprovision with `active: false` first, which keeps the account.
 */
export async function deleteScimUser(
  ctx: ScimUsersContext,
  scope: ScimScope,
  id: string,
  expectedVersion: number | undefined
) {
  await ctx.transaction(async (tx) => {
    const user = await requireScimUser(tx, scope, id);
    if (expectedVersion !== undefined && expectedVersion !== user.version)
      throw new ScimError(412, "The user changed since you read it.");
    await deleteUser(tx, user, "", undefined);
    tx.audit({
      eventType: "user.deleted",
      organizationId: user.organizationId,
      targetType: "user",
      targetId: user.id,
      data: { change: { email: user.email }, via: "scim" },
    });
  });
}
