import type * as CsvParseLibrary from "csv-parse/sync";
import { z } from "zod";
import { ImportedPasswordHashSchema } from "~/schemas/imported-password-hash";
import { GENERIC_USER_IMPORT_COLUMNS } from "~/schemas/user-import";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import { validation } from "../../../errors";
import { requiredOnFirstUse } from "../../../lazy";
import { TOTP_SECRET_BASE32 } from "../../../auth/two-factor/totp";
import { refuseShape } from "./details";
import { emailOf, nameOf, SourceText, type ImportSource, type SourceRole, type SourceUser } from "./source";

/**
 * Porta's own user list, for a source no importer knows (a database of one's own, Firebase,
 * Cognito): a CSV with a header row of the documented columns (docs/migration.md), or a JSON
 * array of objects with the same keys. Roles are named in one cell separated by `;` (CSV) or as
 * an array (JSON); the password hash is any form `users.create` takes (in CSV, the string forms).
 */
const csvParse = requiredOnFirstUse<typeof CsvParseLibrary>("csv-parse/sync");

const Text = SourceText(1000);
const Flag = z.union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no", ""]).transform((v) => (v === "" ? undefined : v === "true" || v === "1" || v === "yes"))]);
const RoleList = z.union([z.array(Text).max(1000), Text.transform((v) => v.split(";").map((name) => name.trim()).filter((name) => name !== ""))]);

const GenericUserSchema = z
  .object({
    email: Text.nullable().optional(),
    given_name: Text.nullable().optional(),
    family_name: Text.nullable().optional(),
    email_verified: Flag.optional(),
    active: Flag.optional(),
    password_hash: z.union([z.literal(""), ImportedPasswordHashSchema]).nullable().optional(),
    roles: RoleList.optional(),
    external_id: Text.nullable().optional(),
    totp_secret: z
      .string()
      .transform((v) => v.replace(/[\s=]/g, "").toUpperCase())
      .pipe(z.union([z.literal(""), z.string().regex(TOTP_SECRET_BASE32, "must be a base32 TOTP secret (SHA-1, 6 digits, 30-second steps)")]))
      .nullable()
      .optional(),
  })
  .strict();

function sourceOf(rows: unknown[], rowOffset: number, fieldOf: (row: number) => string): ImportSource {
  const users: SourceUser[] = [];
  const skipped: ImportSource["skipped"] = [];
  const roles = new Map<string, SourceRole>();
  for (const [index, raw] of rows.entries()) {
    const row = index + rowOffset;
    const parsed = GenericUserSchema.safeParse(raw);
    if (!parsed.success) throw refuseShape(parsed.error, fieldOf(index));
    const user = parsed.data;
    const sourceId = nameOf(user.external_id);
    const email = emailOf(user.email);
    if (email === null) {
      skipped.push({ row, sourceId, email: null, reason: "no_email" });
      continue;
    }
    const userRoles = user.roles ?? [];
    for (const name of userRoles) if (!roles.has(name)) roles.set(name, { name, description: null });
    users.push({
      row,
      sourceId,
      email,
      givenName: nameOf(user.given_name),
      familyName: nameOf(user.family_name),
      emailVerified: user.email_verified ?? false,
      active: user.active ?? true,
      passwordHash: user.password_hash ? user.password_hash : null,
      roles: userRoles,
      totpSecret: user.totp_secret ? user.totp_secret : null,
    });
  }
  return { users, roles: [...roles.values()], skipped };
}

/** A CSV whose header row names documented columns (rows count from 0, the first after the header). */
export function parseGenericCsv(text: string): ImportSource {
  let records: Array<Record<string, string>>;
  try {
    records = csvParse().parse(text, { columns: true, skip_empty_lines: true, trim: true, bom: true, max_record_size: 100_000 }) as Array<Record<string, string>>;
  } catch (error) {
    throw validation([{ field: "data", message: `is not a readable CSV file (${error instanceof Error ? error.message.slice(0, 200) : "unreadable"})` }]);
  }
  const header = records[0] ? Object.keys(records[0]) : [];
  const unknown = header.filter((column) => !(GENERIC_USER_IMPORT_COLUMNS as readonly string[]).includes(column));
  if (unknown.length > 0) {
    throw validation([{ field: "data", message: `has columns Porta does not know: ${unknown.join(", ").slice(0, 300)} (the columns are ${GENERIC_USER_IMPORT_COLUMNS.join(", ")})` }]);
  }
  if (records.length > 0 && !header.includes("email")) throw validation([{ field: "data", message: "needs an email column" }]);
  // A CSV cell is text: a password hash in a cell is one of the string forms.
  return sourceOf(records, 0, (index) => `data.${index}`);
}

/** A JSON array of user objects with the documented keys. */
export function parseGenericJson(text: string): ImportSource {
  if (textNestsDeeperThan(text)) throw validation([{ field: "data", message: `nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep` }]);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw validation([{ field: "data", message: "is not JSON (a JSON user list is one array of objects)" }]);
  }
  if (!Array.isArray(json)) throw validation([{ field: "data", message: "must be a JSON array of user objects" }]);
  return sourceOf(json, 0, (index) => `data.${index}`);
}
