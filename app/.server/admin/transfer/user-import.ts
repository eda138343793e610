import type { User as UserRow } from "~/generated/prisma/client";
import { isEmailAddress } from "~/schemas/email";
import { RoleNameSchema } from "~/schemas/rbac";
import type { UserUpdate } from "~/schemas/user";
import type { UserImportReport, UserImportRequest, UserImportSkip } from "~/schemas/user-import";
import { parseImportedHash } from "../../auth/legacy-hashes";
import { importEnrolledTotp } from "../../auth/two-factor/service";
import type { Context } from "../../context";
import { AppError, validation } from "../../errors";
import { ClientCreateSchema, type ClientCreate } from "~/schemas/client";
import { createClient } from "../clients/service";
import { claimValueProblem, type ClaimType } from "~/schemas/claim";
import { setClaimValue } from "../claims/service";
import { assignUserRole, createRole } from "../rbac/service";
import { createUser, deactivateUser, requireManagedOrganization, updateUser } from "../users/service";
import { parseAuth0Export } from "./importers/auth0";
import { parseGenericCsv, parseGenericJson } from "./importers/generic";
import { parseKeycloakExport } from "./importers/keycloak";
import type { SourceRole, SourceUser } from "./importers/source";

/**
 * Imports of users from another system's export into one organization (decision 087). The plan
 * reads only: it parses the source, checks every row and compares it with the organization's
 * users by address. Applying it commits in batches, each batch's users, role mappings and its one
 * audit entry together, through the same service functions as `users.create` (which wraps an
 * imported hash in Argon2id) and the role operations.
 *
 * An existing user (same address) keeps their password, status and roles: the import only fills
 * in names that differ, raises `emailVerified` from false to true, and adds the roles the source
 * gives them. So a second run of the same file changes nothing.
 */
export const USER_IMPORT_BATCH = 200;

type ImportContext = Context<"settings" | "passwords" | "cache" | "store" | "logoutNotices" | "encrypter" | "config">;

interface Update {
  source: SourceUser;
  userId: string;
  changes: UserUpdate;
  addRoles: string[];
}

interface Plan {
  report: UserImportReport;
  creates: SourceUser[];
  updates: Update[];
  rolesToCreate: SourceRole[];
  /** Role names the users may be given: existing ones and those the import creates. */
  assignable: Set<string>;
  /** Custom claim values of new users, by the user's source row. */
  claimValues: Map<number, Array<{ claimId: string; value: unknown }>>;
  /** Clients to create, as `clients.create` validated them, beside their report rows. */
  clientsToCreate: Array<{ input: ClientCreate; report: UserImportReport["clients"][number] }>;
}

const LOOKUP_CHUNK = 1000;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const PARSERS = { keycloak: parseKeycloakExport, auth0: parseAuth0Export, csv: parseGenericCsv, json: parseGenericJson } as const;

function parseSource(request: UserImportRequest) {
  return PARSERS[request.format](request.data);
}

/** Whether the old hash is a form `users.create` takes; the message when not (it never quotes the hash). */
function credentialProblem(user: SourceUser): string | null {
  if (user.passwordHash === null) return null;
  try {
    parseImportedHash(user.passwordHash, { allowWeak: false, field: "passwordHash" });
    return null;
  } catch (error) {
    if (error instanceof AppError) return error.details?.[0]?.message ?? error.message;
    throw error;
  }
}

export async function planUserImport(ctx: Context, organizationId: string, request: UserImportRequest): Promise<Plan> {
  await requireManagedOrganization(ctx, organizationId);
  const source = parseSource(request);
  const skipped: UserImportSkip[] = [...source.skipped];
  const roleSkips: UserImportSkip[] = [];

  const validRoles = source.roles.filter((role, index) => {
    const parsed = RoleNameSchema.safeParse(role.name);
    if (!parsed.success || parsed.data !== role.name) {
      roleSkips.push({ row: index, sourceId: role.name, email: null, reason: "invalid_role_name", detail: parsed.success ? "has spaces around it" : parsed.error.issues[0]!.message });
    }
    return parsed.success && parsed.data === role.name;
  });
  const existingRoles = new Set(
    (await ctx.db.role.findMany({ where: { organizationId, name: { in: validRoles.map((r) => r.name) } }, select: { name: true } })).map((r) => r.name),
  );
  const rolesToCreate = validRoles.filter((r) => !existingRoles.has(r.name));
  const assignable = new Set(validRoles.map((r) => r.name));

  const seen = new Set<string>();
  const candidates: SourceUser[] = [];
  for (const user of source.users) {
    const base = { row: user.row, sourceId: user.sourceId, email: user.email };
    if (!isEmailAddress(user.email)) skipped.push({ ...base, reason: "invalid_email" });
    else if (seen.has(user.email)) skipped.push({ ...base, reason: "duplicate_email" });
    else {
      seen.add(user.email);
      candidates.push(user);
    }
  }

  const existing = new Map<string, { id: string; givenName: string | null; familyName: string | null; emailVerified: boolean; roles: Set<string> }>();
  for (const emails of chunks(candidates.map((u) => u.email), LOOKUP_CHUNK)) {
    const rows = await ctx.db.user.findMany({
      where: { organizationId, email: { in: emails } },
      select: { id: true, email: true, givenName: true, familyName: true, emailVerified: true, roles: { select: { role: { select: { name: true } } } } },
    });
    for (const row of rows) existing.set(row.email, { ...row, roles: new Set(row.roles.map((r) => r.role.name)) });
  }

  const creates: SourceUser[] = [];
  const updates: Update[] = [];
  let unchanged = 0;
  for (const user of candidates) {
    const roles = user.roles.filter((name) => assignable.has(name));
    const found = existing.get(user.email);
    if (!found) {
      const problem = credentialProblem(user);
      if (problem !== null) skipped.push({ row: user.row, sourceId: user.sourceId, email: user.email, reason: "unsupported_credential", detail: problem });
      else creates.push({ ...user, roles });
      continue;
    }
    const changes: UserUpdate = {};
    if (user.givenName !== null && user.givenName !== found.givenName) changes.givenName = user.givenName;
    if (user.familyName !== null && user.familyName !== found.familyName) changes.familyName = user.familyName;
    if (user.emailVerified && !found.emailVerified) changes.emailVerified = true;
    const addRoles = roles.filter((name) => !found.roles.has(name));
    if (Object.keys(changes).length === 0 && addRoles.length === 0) unchanged += 1;
    else updates.push({ source: user, userId: found.id, changes, addRoles });
  }

  // Metadata into custom claims: each mapped claim must be one of this organization's applications'.
  const mappings = request.claims ?? [];
  const claimTypes = new Map(
    (
      await ctx.db.customClaimDefinition.findMany({
        where: { id: { in: mappings.map((m) => m.claimId) }, application: { organizationId } },
        select: { id: true, claimType: true },
      })
    ).map((c) => [c.id, c.claimType as ClaimType]),
  );
  const unknownClaim = mappings.findIndex((m) => !claimTypes.has(m.claimId));
  if (unknownClaim >= 0) throw validation([{ field: `claims.${unknownClaim}.claimId`, message: "is not a custom claim of an application of this organization" }]);
  const claimValues: Plan["claimValues"] = new Map();
  const claimValuesRefused: UserImportReport["claimValuesRefused"] = [];
  for (const user of creates) {
    for (const mapping of mappings) {
      const value = mapping.source.split(".").reduce<unknown>((at, key) => (at !== null && typeof at === "object" && !Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined), user.metadata);
      if (value === undefined || value === null) continue;
      const problem = claimValueProblem(claimTypes.get(mapping.claimId)!, value);
      if (problem) claimValuesRefused.push({ row: user.row, sourceId: user.sourceId, source: mapping.source, detail: problem });
      else claimValues.set(user.row, [...(claimValues.get(user.row) ?? []), { claimId: mapping.claimId, value }]);
    }
  }

  const clientsToCreate: Plan["clientsToCreate"] = [];
  const clientReports: UserImportReport["clients"] = [];
  const sourceClients = source.clients ?? [];
  const existingClients = new Set(
    (await ctx.db.client.findMany({ where: { organizationId, name: { in: sourceClients.map((c) => c.name) } }, select: { name: true } })).map((c) => c.name),
  );
  for (const client of sourceClients) {
    const row = { sourceId: client.sourceId, name: client.name };
    if (client.skip) {
      clientReports.push({ ...row, outcome: "skipped", detail: client.skip });
      continue;
    }
    if (existingClients.has(client.name)) {
      clientReports.push({ ...row, outcome: "exists" });
      continue;
    }
    existingClients.add(client.name);
    const input = ClientCreateSchema.safeParse({ organizationId, name: client.name, clientType: client.clientType, redirectUris: client.redirectUris, postLogoutRedirectUris: client.postLogoutRedirectUris, grantTypes: client.grantTypes });
    if (!input.success) {
      const issue = input.error.issues[0]!;
      clientReports.push({ ...row, outcome: "skipped", detail: `${issue.path.join(".")} ${issue.message}`.trim() });
      continue;
    }
    const report = { ...row, outcome: "create" as const, ...(client.dropped ? { detail: client.dropped } : {}) };
    clientReports.push(report);
    clientsToCreate.push({ input: input.data, report });
  }

  skipped.sort((a, b) => a.row - b.row);
  const report: UserImportReport = {
    format: request.format,
    total: source.users.length,
    created: creates.length,
    updated: updates.length,
    unchanged,
    // The roles' skips first (their rows count the roles), then the users' in the source's order.
    skipped: [...roleSkips, ...skipped],
    rolesCreated: rolesToCreate.map((r) => r.name),
    importedPasswords: creates.filter((u) => u.passwordHash !== null).length,
    importedTotp: creates.filter((u) => u.totpSecret !== null).length,
    totpNotCarried: creates.flatMap((u) => (u.totpProblem ? [{ row: u.row, sourceId: u.sourceId, email: u.email, detail: u.totpProblem }] : [])),
    clients: clientReports,
    claimValues: [...claimValues.values()].reduce((sum, values) => sum + values.length, 0),
    claimValuesRefused,
  };
  return { report, creates, updates, rolesToCreate, assignable, claimValues, clientsToCreate };
}

/** What applying needs from the door: reads outside a transaction, and one transaction per batch. */
export interface BatchRunner {
  transaction<T>(work: (ctx: ImportContext) => Promise<T>): Promise<T>;
}

async function roleIds(ctx: Context, organizationId: string, names: Set<string>): Promise<Map<string, string>> {
  const rows = await ctx.db.role.findMany({ where: { organizationId, name: { in: [...names] } }, select: { id: true, name: true } });
  return new Map(rows.map((r) => [r.name, r.id]));
}

async function applyBatch(ctx: ImportContext, organizationId: string, adminId: string, plan: Plan, batch: Array<SourceUser | Update>, first: boolean) {
  const rolesCreated: string[] = [];
  if (first) {
    for (const role of plan.rolesToCreate) {
      // Another write may have created it since the plan read the roles.
      const exists = await ctx.db.role.findUnique({ where: { organizationId_name: { organizationId, name: role.name } }, select: { id: true } });
      if (exists) continue;
      await createRole(ctx, { organizationId, name: role.name, ...(role.description !== null ? { description: role.description.slice(0, 500) } : {}) });
      rolesCreated.push(role.name);
    }
    for (const planned of plan.clientsToCreate) {
      // Another write may have created one by that name since the plan read the clients.
      if (await ctx.db.client.findFirst({ where: { organizationId, name: planned.input.name }, select: { id: true } })) {
        planned.report.outcome = "exists";
        continue;
      }
      const { client, secret } = await createClient(ctx, planned.input);
      ctx.audit({ eventType: "client.created", organizationId, targetType: "client", targetId: client.id, data: { change: planned.input, importedFrom: planned.report.sourceId, ...(secret ? { secretId: secret.id } : {}) } });
      Object.assign(planned.report, { outcome: "created", clientId: client.id, ...(secret ? { clientSecret: secret.value } : {}) });
    }
  }
  const ids = await roleIds(ctx, organizationId, plan.assignable);
  let created = 0;
  let updated = 0;
  let importedPasswords = 0;
  let importedTotp = 0;
  let claimValues = 0;
  for (const item of batch) {
    let user: UserRow;
    let roles: string[];
    if ("changes" in item) {
      user = await ctx.db.user.findUniqueOrThrow({ where: { id: item.userId } });
      if (Object.keys(item.changes).length > 0) user = await updateUser(ctx, user, item.changes, undefined);
      roles = item.addRoles;
      updated += 1;
    } else {
      user = await createUser(ctx, organizationId, {
        email: item.email,
        emailVerified: item.emailVerified,
        ...(item.givenName !== null ? { givenName: item.givenName } : {}),
        ...(item.familyName !== null ? { familyName: item.familyName } : {}),
        ...(item.passwordHash !== null ? { importedPasswordHash: item.passwordHash } : {}),
      });
      for (const { claimId, value } of plan.claimValues.get(item.row) ?? []) {
        await setClaimValue(ctx, claimId, user.id, value);
        claimValues += 1;
      }
      if (item.totpSecret !== null) {
        await importEnrolledTotp(ctx, user.id, item.totpSecret);
        importedTotp += 1;
      }
      if (!item.active) user = await deactivateUser(ctx, user, adminId, undefined);
      if (item.passwordHash !== null) importedPasswords += 1;
      roles = item.roles;
      created += 1;
    }
    for (const name of roles) {
      const roleId = ids.get(name);
      if (roleId) await assignUserRole(ctx, user.id, roleId);
    }
  }
  return { created, updated, importedPasswords, importedTotp, claimValues, rolesCreated };
}

/**
 * Applies the plan in batches of USER_IMPORT_BATCH users, each its own transaction with one
 * `user.imported` entry of counts (never a hash). A batch that fails rolls back alone; those
 * before it stay, and running the import again completes it.
 */
export async function applyUserImport(ctx: Context, runner: BatchRunner, organizationId: string, request: UserImportRequest, adminId: string): Promise<UserImportReport> {
  const plan = await planUserImport(ctx, organizationId, request);
  const items: Array<SourceUser | Update> = [...plan.creates, ...plan.updates];
  const batches = chunks(items, USER_IMPORT_BATCH);
  if (batches.length === 0 && (plan.rolesToCreate.length > 0 || plan.clientsToCreate.length > 0)) batches.push([]);
  let index = 0;
  for (const batch of batches) {
    const first = index === 0;
    const counts = await runner.transaction(async (tx) => {
      const result = await applyBatch(tx, organizationId, adminId, plan, batch, first);
      tx.audit({
        eventType: "user.imported",
        organizationId,
        targetType: "organization",
        targetId: organizationId,
        data: { format: request.format, batch: index + 1, of: batches.length, ...result },
      });
      return result;
    });
    if (first) plan.report.rolesCreated = counts.rolesCreated;
    index += 1;
  }
  return { ...plan.report, batches: batches.length };
}
