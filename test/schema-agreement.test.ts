import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma, type PrismaClient } from "~/generated/prisma/client";
import { type Database } from "~/.server/db/client";
import { openMigratedDatabase, type MigratedDatabase } from "./support/migrated-database";
import {
  expectedColumnType,
  expectsDatabaseDefault,
  generatedRow,
  inDependencyOrder,
  literalsOf,
  readPrismaSchema,
  REFERENTIAL_ACTION,
  type CheckLiterals,
  type ModelSpec,
} from "./support/prisma-schema";

/**
 * prisma/schema.prisma (which the generated client is built from) and the hand-written SQL in
 * prisma/migrations must describe the same tables. If they drift, the client sends queries the
 * database rejects, or silently loses a column.
 */

const MODEL_NAMES = Object.values(Prisma.ModelName);

/** The generated client's list of scalar fields of a model, e.g. Prisma.OrganizationScalarFieldEnum. */
function scalarFieldsOf(model: Prisma.ModelName): string[] {
  const enums = Prisma as unknown as Record<string, Record<string, string> | undefined>;
  const fieldEnum = enums[`${model}ScalarFieldEnum`];
  if (!fieldEnum) throw new Error(`the generated client has no ${model}ScalarFieldEnum`);
  return Object.values(fieldEnum);
}

async function sql<Row extends Record<string, unknown>>(db: Database, text: string, params?: unknown[]): Promise<Row[]> {
  return db.rawTransaction((tx) => tx.query<Row>(text, params));
}

/** The part of a generated model delegate (prisma.user, prisma.organization, ...) a round trip needs. */
interface Delegate {
  create(args: { data: Record<string, unknown> }): Promise<object>;
  findUniqueOrThrow(args: { where: Record<string, unknown> }): Promise<object>;
}

function delegateOf(prisma: PrismaClient, model: string): Delegate {
  const delegate = (prisma as unknown as Record<string, Delegate | undefined>)[model[0]!.toLowerCase() + model.slice(1)];
  if (!delegate) throw new Error(`the client has no delegate for ${model}`);
  return delegate;
}

/** The findUnique `where` of a row by its primary key (compound keys use Prisma's a_b name). */
function primaryKeyWhere(model: ModelSpec, row: Record<string, unknown>): Record<string, unknown> {
  if (model.id.length === 1) return { [model.id[0]!]: row[model.id[0]!] };
  return { [model.id.join("_")]: Object.fromEntries(model.id.map((f) => [f, row[f]])) };
}

interface ColumnRow extends Record<string, unknown> {
  table_name: string;
  column_name: string;
  udt_name: string;
  is_nullable: "YES" | "NO";
  column_default: string | null;
  datetime_precision: number | null;
}

interface IndexRow extends Record<string, unknown> {
  table_name: string;
  index_name: string;
  is_unique: boolean;
  is_primary: boolean;
  columns: string[];
}

interface ForeignKeyRow extends Record<string, unknown> {
  table_name: string;
  constraint_name: string;
  columns: string[];
  target_table: string;
  target_columns: string[];
  on_delete: string;
  on_update: string;
}

describe("schema.prisma and the SQL migrations agree", () => {
  let database: MigratedDatabase;
  let db: Database;
  let prisma: PrismaClient;
  let models: ModelSpec[];
  let columns: ColumnRow[];

  beforeAll(async () => {
    database = await openMigratedDatabase();
    db = database.db;
    prisma = db.prisma;
    models = readPrismaSchema();
    columns = await sql<ColumnRow>(
      db,
      `SELECT table_name::text, column_name::text, udt_name::text, is_nullable::text, column_default::text,
              datetime_precision::int AS datetime_precision
         FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations'`,
    );
  });

  afterAll(async () => {
    await database?.dispose();
  });

  it("has a table for every model of the generated client, and no other", async () => {
    const tables = await sql<{ table_name: string }>(
      db,
      `SELECT table_name::text FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    expect(tables.map((t) => t.table_name).sort()).toEqual([...MODEL_NAMES].sort());
    // The schema reader sees the same models as the generator did.
    expect(models.map((m) => m.name).sort()).toEqual([...MODEL_NAMES].sort());
  });

  it.each(MODEL_NAMES)("%s: the table's columns are exactly the client's scalar fields", (model) => {
    const tableColumns = columns.filter((c) => c.table_name === model).map((c) => c.column_name);
    expect(tableColumns.sort()).toEqual(scalarFieldsOf(model).sort());
  });

  it.each(MODEL_NAMES)("%s: every column has the type, nullability and default the schema declares", (model) => {
    const spec = models.find((m) => m.name === model)!;
    expect(spec.scalars.map((f) => f.name).sort()).toEqual(scalarFieldsOf(model).sort());
    for (const field of spec.scalars) {
      const column = columns.find((c) => c.table_name === model && c.column_name === field.name)!;
      const expected = expectedColumnType(field);
      const where = `${model}.${field.name}`;
      expect(column.udt_name, where).toBe(expected.udtName);
      if (expected.precision !== undefined) expect(column.datetime_precision, where).toBe(expected.precision);
      expect(column.is_nullable, where).toBe(field.optional ? "YES" : "NO");
      expect(column.column_default !== null, `${where} has a database default`).toBe(expectsDatabaseDefault(field));
    }
  });

  it("has the primary keys, unique indexes and indexes the schema declares, named as Prisma names them", async () => {
    const indexes = await sql<IndexRow>(
      db,
      `SELECT t.relname::text AS table_name, i.relname::text AS index_name, ix.indisunique AS is_unique,
              ix.indisprimary AS is_primary,
              array_agg(a.attname::text ORDER BY k.ord) AS columns
         FROM pg_index ix
         JOIN pg_class i ON i.oid = ix.indexrelid
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE n.nspname = current_schema() AND t.relname <> '_prisma_migrations'
        GROUP BY t.relname, i.relname, ix.indisunique, ix.indisprimary`,
    );
    const expected: IndexRow[] = models.flatMap((m) => [
      { table_name: m.name, index_name: `${m.name}_pkey`, is_unique: true, is_primary: true, columns: m.id },
      ...m.scalars
        .filter((f) => f.unique)
        .map((f) => ({ table_name: m.name, index_name: `${m.name}_${f.name}_key`, is_unique: true, is_primary: false, columns: [f.name] })),
      ...m.uniques.map((cols) => ({ table_name: m.name, index_name: `${m.name}_${cols.join("_")}_key`, is_unique: true, is_primary: false, columns: cols })),
      ...m.indexes.map((cols) => ({ table_name: m.name, index_name: `${m.name}_${cols.join("_")}_idx`, is_unique: false, is_primary: false, columns: cols })),
    ]);
    const byName = (a: IndexRow, b: IndexRow) => a.index_name.localeCompare(b.index_name);
    for (const model of models) expect(model.id.length, `${model.name} has a primary key`).toBeGreaterThan(0);
    expect(indexes.sort(byName)).toEqual(expected.sort(byName));
  });

  it("has the foreign keys the schema's relations declare, with their referential actions", async () => {
    const foreignKeys = await sql<ForeignKeyRow>(
      db,
      `SELECT t.relname::text AS table_name, c.conname::text AS constraint_name,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
              r.relname::text AS target_table,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS target_columns,
              c.confdeltype::text AS on_delete, c.confupdtype::text AS on_update
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_class r ON r.oid = c.confrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE c.contype = 'f' AND n.nspname = current_schema()`,
    );
    const expected: ForeignKeyRow[] = models.flatMap((m) =>
      m.relations.map((rel) => ({
        table_name: m.name,
        constraint_name: `${m.name}_${rel.fields.join("_")}_fkey`,
        columns: rel.fields,
        target_table: rel.target,
        target_columns: rel.references,
        // Prisma's defaults: Restrict for a required relation, SetNull for an optional one; updates cascade.
        on_delete: REFERENTIAL_ACTION[rel.onDelete ?? (rel.optional ? "SetNull" : "Restrict")]!,
        on_update: REFERENTIAL_ACTION[rel.onUpdate ?? "Cascade"]!,
      })),
    );
    const byName = (a: ForeignKeyRow, b: ForeignKeyRow) => a.constraint_name.localeCompare(b.constraint_name);
    expect(foreignKeys.sort(byName)).toEqual(expected.sort(byName));
  });

  describe("every model round-trips through the generated client", () => {
    const t1 = new Date("2024-02-29T12:34:56.789Z");
    const t2 = new Date("2025-07-01T00:00:00.001Z");
    const t3 = new Date("2030-12-31T23:59:59.999Z");
    const ids = {
      org: randomUUID(),
      countedOrg: randomUUID(),
      app: randomUUID(),
      module: randomUUID(),
      client: `client-${randomUUID()}`,
      secret: randomUUID(),
      user: randomUUID(),
      role: randomUUID(),
      permission: randomUUID(),
      claim: randomUUID(),
      key: `kid-${randomUUID()}`,
      audit: randomUUID(),
      config: `config.${randomUUID()}`,
    };

    const organization = {
      id: ids.org,
      name: "Ácme Ïnc — 東京",
      slug: "acme-roundtrip",
      status: "suspended",
      defaultLoginMethods: ["magic_link", "password"],
      twoFactorPolicy: "required_totp",
      defaultLocale: "de",
      branding: { name: "Acme", colors: { primary: "#0a84ff" }, logos: ["a.svg", null, 3.5], dark: true, note: "🔐 \"quoted\"" },
      version: 7,
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.OrganizationUncheckedCreateInput;
    const application = {
      id: ids.app,
      organizationId: ids.org,
      name: "Billing",
      description: "Invoices and payments",
      status: "inactive",
      version: 3,
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.ApplicationUncheckedCreateInput;
    const applicationModule = {
      id: ids.module,
      applicationId: ids.app,
      name: "Reports",
      description: null,
      status: "inactive",
      createdAt: t1,
      updatedAt: t3,
    } satisfies Prisma.ApplicationModuleUncheckedCreateInput;
    const client = {
      id: ids.client,
      organizationId: ids.org,
      applicationId: ids.app,
      name: "Billing web",
      applicationType: "native",
      tokenEndpointAuthMethod: "none",
      redirectUris: ["http://127.0.0.1/cb", "com.example.app:/callback"],
      postLogoutRedirectUris: ["https://billing.example.com/bye"],
      grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
      scope: "openid email",
      loginMethods: ["magic_link"],
      status: "inactive",
      version: 2,
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.ClientUncheckedCreateInput;
    const clientSecret = {
      id: ids.secret,
      clientId: ids.client,
      secretHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      hint: "wxyz",
      label: "CI deploy",
      status: "revoked",
      expiresAt: t3,
      createdAt: t1,
      revokedAt: t2,
    } satisfies Prisma.ClientSecretUncheckedCreateInput;
    const user = {
      id: ids.user,
      organizationId: ids.org,
      email: "Mixed.Case@Example.IO",
      emailVerified: true,
      givenName: "Zoë",
      familyName: "O'Brien",
      locale: "fr-CA",
      passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g",
      status: "inactive",
      failedLoginCount: 4,
      lockedUntil: t3,
      lastLoginAt: t2,
      version: 9,
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.UserUncheckedCreateInput;
    const role = {
      id: ids.role,
      organizationId: ids.org,
      name: "billing-admin",
      description: "Manages invoices",
      version: 5,
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.RoleUncheckedCreateInput;
    const permission = {
      id: ids.permission,
      organizationId: ids.org,
      name: "invoice:write",
      description: null,
      createdAt: t1,
    } satisfies Prisma.PermissionUncheckedCreateInput;
    const userRole = { userId: ids.user, roleId: ids.role, createdAt: t2 } satisfies Prisma.UserRoleUncheckedCreateInput;
    const rolePermission = { roleId: ids.role, permissionId: ids.permission, createdAt: t3 } satisfies Prisma.RolePermissionUncheckedCreateInput;
    const claimDefinition = {
      id: ids.claim,
      applicationId: ids.app,
      claimName: "cost_center",
      claimType: "json",
      description: "Where invoices are booked",
      scope: "billing",
      createdAt: t1,
      updatedAt: t2,
    } satisfies Prisma.CustomClaimDefinitionUncheckedCreateInput;
    const claimValue = {
      claimId: ids.claim,
      userId: ids.user,
      value: [1, "two", { three: [3] }, null, false],
      updatedAt: t3,
    } satisfies Prisma.CustomClaimValueUncheckedCreateInput;
    const configEntry = {
      key: ids.config,
      value: { accessTokenTtl: 900, nested: { list: ["a", "b"] } },
      updatedBy: "admin@porta.test",
      updatedAt: t1,
    } satisfies Prisma.ConfigEntryUncheckedCreateInput;
    const signingKey = {
      id: ids.key,
      alg: "ES256",
      publicJwk: { kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" },
      privateJwkEncrypted: "v1.aXY.dGFn.Y2lwaGVy",
      status: "retiring",
      createdAt: t1,
      retireAfter: t3,
      retiredAt: null,
    } satisfies Prisma.SigningKeyUncheckedCreateInput;
    const auditEntry = {
      id: ids.audit,
      createdAt: t2,
      eventType: "user.created",
      organizationId: ids.org,
      actorType: "admin",
      actorId: ids.user,
      targetType: "user",
      targetId: ids.user,
      ip: "2001:db8::1",
      requestId: "req-1234567890",
      data: { changes: { email: ["a@x.io", "b@x.io"] }, count: 2 },
    } satisfies Prisma.AuditEntryUncheckedCreateInput;

    const oidcPayload = {
      model: "RefreshToken",
      idHash: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
      organizationId: ids.org,
      payload: { kind: "RefreshToken", scope: "openid offline_access", exp: 1_900_000_000, rotations: [1, 2] },
      grantId: "grant-abc",
      accountId: ids.user,
      expiresAt: t3,
      consumedAt: t2,
      createdAt: t1,
    } satisfies Prisma.OidcPayloadUncheckedCreateInput;

    /** What was written, what create returned, and what a fresh read returned, per model. */
    const roundTrips = new Map<Prisma.ModelName, { input: object; created: object; read: object }>();
    /** Models and columns whose values were derived from the schema rather than written out above. */
    const derived: string[] = [];

    beforeAll(async () => {
      const handWritten: Partial<Record<Prisma.ModelName, object>> = {
        Organization: organization,
        Application: application,
        ApplicationModule: applicationModule,
        Client: client,
        ClientSecret: clientSecret,
        User: user,
        Role: role,
        Permission: permission,
        UserRole: userRole,
        RolePermission: rolePermission,
        CustomClaimDefinition: claimDefinition,
        CustomClaimValue: claimValue,
        ConfigEntry: configEntry,
        SigningKey: signingKey,
        AuditEntry: auditEntry,
        OidcPayload: oidcPayload,
        // The triggers on "User" made the round-trip organization's count when its user was
        // written; this row is for an organization without users.
        OrganizationUserCount: { organizationId: ids.countedOrg, users: 7 },
      };
      await prisma.organization.create({ data: { id: ids.countedOrg, name: "Counted", slug: "counted-roundtrip" } });

      // Columns and models added after this file was written get values derived from the
      // schema: every column set, none to its default, within the table's CHECK constraints.
      const checks: CheckLiterals = new Map();
      const checkRows = await sql<{ table_name: string; column_name: string; definition: string }>(
        db,
        `SELECT t.relname::text AS table_name, a.attname::text AS column_name, pg_get_constraintdef(c.oid) AS definition
           FROM pg_constraint c
           JOIN pg_class t ON t.oid = c.conrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
          WHERE c.contype = 'c' AND cardinality(c.conkey) = 1 AND n.nspname = current_schema()`,
      );
      for (const r of checkRows) checks.set(`${r.table_name}.${r.column_name}`, literalsOf(r.definition));

      const rows = new Map<string, Record<string, unknown>>();
      for (const model of inDependencyOrder(models)) {
        const name = model.name as Prisma.ModelName;
        const written = handWritten[name];
        const input = { ...generatedRow(model, checks, rows, randomUUID().slice(0, 8)), ...written };
        if (!written) derived.push(name);
        else derived.push(...model.scalars.filter((f) => !(f.name in written)).map((f) => `${name}.${f.name}`));
        const delegate = delegateOf(prisma, name);
        roundTrips.set(name, {
          input,
          created: await delegate.create({ data: input }),
          read: await delegate.findUniqueOrThrow({ where: primaryKeyWhere(model, input) }),
        });
        rows.set(name, input);
      }
    });

    it("covers every model", () => {
      expect([...roundTrips.keys()].sort(), `rows derived from the schema: ${derived.join(", ") || "none"}`).toEqual([...MODEL_NAMES].sort());
    });

    it.each(MODEL_NAMES)("%s: a row with every column set reads back equal", (model) => {
      const trip = roundTrips.get(model)!;
      // Every column is written explicitly, so the comparison covers all of them.
      expect(Object.keys(trip.input).sort()).toEqual(scalarFieldsOf(model).sort());
      expect(trip.created).toEqual(trip.input);
      expect(trip.read).toEqual(trip.input);
    });

    it("keeps Date instances, millisecond precision, arrays in order and JSON structure", () => {
      const read = roundTrips.get("Organization")!.read as typeof organization;
      expect(read.createdAt).toBeInstanceOf(Date);
      expect(read.createdAt.getTime()).toBe(t1.getTime());
      expect(read.defaultLoginMethods).toEqual(["magic_link", "password"]);
      expect(read.branding).toStrictEqual(organization.branding);
      expect((roundTrips.get("CustomClaimValue")!.read as typeof claimValue).value).toStrictEqual([1, "two", { three: [3] }, null, false]);
    });

    it("keeps the case of citext values as written, and looks them up case-insensitively", async () => {
      expect((roundTrips.get("User")!.read as typeof user).email).toBe("Mixed.Case@Example.IO");
      const found = await prisma.user.findUnique({ where: { organizationId_email: { organizationId: ids.org, email: "mixed.case@example.io" } } });
      expect(found?.id).toBe(ids.user);
      const bySlug = await prisma.organization.findUnique({ where: { slug: "ACME-RoundTrip" } });
      expect(bySlug?.id).toBe(ids.org);
    });

    it("applies the schema's defaults when only required fields are given", async () => {
      const before = Date.now();
      const org = await prisma.organization.create({ data: { name: "Defaults", slug: `defaults-${randomUUID().slice(0, 8)}` } });
      expect(org).toMatchObject({
        status: "active",
        defaultLoginMethods: ["password", "magic_link"],
        twoFactorPolicy: "optional",
        defaultLocale: "en",
        branding: {},
        version: 1,
      });
      expect(org.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(org.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5_000);
      const c = await prisma.client.create({ data: { id: `defaults-${randomUUID()}`, organizationId: org.id, name: "Defaults" } });
      expect(c).toMatchObject({
        applicationType: "web",
        tokenEndpointAuthMethod: "client_secret_basic",
        redirectUris: [],
        postLogoutRedirectUris: [],
        grantTypes: ["authorization_code", "refresh_token"],
        loginMethods: [],
        applicationId: null,
      });
    });
  });

  describe("case-insensitive uniqueness", () => {
    async function uniqueViolation(promise: Promise<unknown>): Promise<string | undefined> {
      try {
        await promise;
        return undefined;
      } catch (error) {
        expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
        return (error as Prisma.PrismaClientKnownRequestError).code;
      }
    }

    it("refuses organization slugs that differ only in case", async () => {
      await prisma.organization.create({ data: { name: "Acme", slug: "Acme" } });
      expect(await uniqueViolation(prisma.organization.create({ data: { name: "acme", slug: "acme" } }))).toBe("P2002");
      expect(await prisma.organization.count({ where: { slug: "ACME" } })).toBe(1);
    });

    it("refuses user emails that differ only in case within one organization, and allows them across organizations", async () => {
      const [one, two] = await Promise.all([
        prisma.organization.create({ data: { name: "One", slug: `one-${randomUUID().slice(0, 8)}` } }),
        prisma.organization.create({ data: { name: "Two", slug: `two-${randomUUID().slice(0, 8)}` } }),
      ]);
      await prisma.user.create({ data: { organizationId: one.id, email: "A@x.io" } });
      expect(await uniqueViolation(prisma.user.create({ data: { organizationId: one.id, email: "a@X.io" } }))).toBe("P2002");
      const other = await prisma.user.create({ data: { organizationId: two.id, email: "a@X.io" } });
      expect(other.email).toBe("a@X.io");
      expect(await prisma.user.count({ where: { email: "a@x.io" } })).toBe(2);
    });
  });
});
