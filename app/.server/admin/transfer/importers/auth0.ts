import { z } from "zod";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import { validation } from "../../../errors";
import { refuseShape } from "./details";
import { emailOf, nameOf, SourceText, type ImportSource, type SourceUser } from "./source";

/**
 * An Auth0 bulk user export (the export job's NDJSON, one user a line), with the bcrypt hash of
 * Auth0's password hash export merged into each line as `passwordHash`, or that password hash
 * export itself (its lines carry `_id.$oid`, `email`, `email_verified` and `passwordHash`).
 * Metadata values are carried into custom claims where the import maps them; roles, identities
 * other than the database connection and MFA enrolments are not carried.
 */
const Text = SourceText(1000);
export const Auth0UserSchema = z.object({
  user_id: Text.optional(),
  /** The password hash export's id of a database user, whose user_id is `auth0|<oid>`. */
  _id: z.object({ $oid: Text }).optional(),
  email: Text.nullable().optional(),
  email_verified: z.boolean().optional(),
  given_name: Text.nullable().optional(),
  family_name: Text.nullable().optional(),
  name: Text.nullable().optional(),
  blocked: z.boolean().optional(),
  passwordHash: z.string().max(4096).nullable().optional(),
  user_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  app_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});

export function parseAuth0Export(text: string): ImportSource {
  const users: SourceUser[] = [];
  const skipped: ImportSource["skipped"] = [];
  const lines = text.split(/\r?\n/);
  for (const [row, line] of lines.entries()) {
    if (line.trim() === "") continue;
    if (textNestsDeeperThan(line)) throw validation([{ field: `data.${row}`, message: `nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep` }]);
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw validation([{ field: `data.${row}`, message: "is not JSON (an Auth0 export has one JSON object a line)" }]);
    }
    const parsed = Auth0UserSchema.safeParse(json);
    if (!parsed.success) throw refuseShape(parsed.error, `data.${row}`);
    const user = parsed.data;
    const sourceId = user.user_id ?? (user._id ? `auth0|${user._id.$oid}` : null);
    const email = emailOf(user.email);
    if (email === null) {
      skipped.push({ row, sourceId, email: null, reason: "no_email" });
      continue;
    }
    users.push({
      row,
      sourceId,
      email,
      givenName: nameOf(user.given_name),
      familyName: nameOf(user.family_name),
      emailVerified: user.email_verified ?? false,
      active: user.blocked !== true,
      passwordHash: user.passwordHash ? user.passwordHash : null,
      roles: [],
      // Auth0's export carries no MFA secrets: enrolled users enroll again in Porta.
      totpSecret: null,
      metadata: { user_metadata: user.user_metadata ?? {}, app_metadata: user.app_metadata ?? {} },
    });
  }
  return { users, roles: [], skipped };
}
