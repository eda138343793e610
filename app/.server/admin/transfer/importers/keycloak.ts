import { z } from "zod";
import type { ImportedPasswordHash } from "~/schemas/imported-password-hash";
import { MAX_JSON_DEPTH, textNestsDeeperThan } from "~/schemas/json-depth";
import type { UserImportSkip } from "~/schemas/user-import";
import { validation } from "../../../errors";
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS, totpSecretOfBytes } from "../../../auth/two-factor/totp";
import { refuseShape } from "./details";
import { emailOf, nameOf, SourceText, type ImportSource, type SourceClient, type SourceRole, type SourceUser } from "./source";

/**
 * A Keycloak realm export (`kc.sh export --realm <realm>`, one realm's JSON, or one of the
 * `<realm>-users-<n>.json` files the directory form writes): its users with their names,
 * verification, enabled flag, password credential, TOTP credential and realm roles, and the
 * realm's roles, and its OpenID Connect clients (redirect URIs, public or confidential, flows;
 * new secrets). Client roles, groups and identity-provider links are not carried.
 */
const Text = SourceText(1000);
const Credential = z.object({
  type: Text.optional(),
  secretData: z.string().max(4096).optional(),
  credentialData: z.string().max(4096).optional(),
});
const User = z.object({
  username: Text.optional(),
  email: Text.nullable().optional(),
  emailVerified: z.boolean().optional(),
  enabled: z.boolean().optional(),
  firstName: Text.nullable().optional(),
  lastName: Text.nullable().optional(),
  credentials: z.array(Credential).max(20).optional(),
  realmRoles: z.array(Text).max(1000).optional(),
});
const Role = z.object({ name: Text, description: SourceText(4000).nullable().optional() });
const Client = z.object({
  clientId: Text,
  name: Text.nullable().optional(),
  enabled: z.boolean().optional(),
  protocol: Text.optional(),
  publicClient: z.boolean().optional(),
  bearerOnly: z.boolean().optional(),
  standardFlowEnabled: z.boolean().optional(),
  serviceAccountsEnabled: z.boolean().optional(),
  redirectUris: z.array(SourceText(2000)).max(1000).optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});
export const KeycloakRealmSchema = z.object({
  realm: Text,
  users: z.array(User).optional(),
  roles: z.object({ realm: z.array(Role).optional() }).optional(),
  clients: z.array(Client).max(10_000).optional(),
});

/** The clients every Keycloak realm has for its own consoles and brokering. */
const BUILT_IN_CLIENTS = new Set(["account", "account-console", "admin-cli", "broker", "realm-management", "security-admin-console"]);

/**
 * Keycloak allows wildcards (`https://app.example.com/*`, `+`, `*`) and relative URIs in redirect
 * URIs; Porta compares exactly (the spec's rule), so only absolute URIs without a wildcard carry.
 */
function exactUris(uris: string[]): { kept: string[]; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const uri of uris) {
    (URL.canParse(uri) && !uri.includes("*") && !kept.includes(uri) ? kept : dropped).push(uri);
  }
  return { kept, dropped };
}

function clientOf(client: z.infer<typeof Client>): SourceClient {
  const name = client.name && !client.name.startsWith("${") ? client.name.trim() : client.clientId;
  const postLogout = typeof client.attributes?.["post.logout.redirect.uris"] === "string" ? (client.attributes["post.logout.redirect.uris"] as string).split("##").filter((u) => u !== "") : [];
  const redirects = exactUris(client.redirectUris ?? []);
  const logouts = exactUris(postLogout);
  const clientType = client.publicClient ? "public" : "confidential";
  const grantTypes = [
    ...(client.standardFlowEnabled !== false ? ["authorization_code", "refresh_token"] : []),
    ...(clientType === "confidential" && client.serviceAccountsEnabled ? ["client_credentials"] : []),
  ];
  const dropped = [...redirects.dropped, ...logouts.dropped];
  const base: SourceClient = {
    sourceId: client.clientId,
    name,
    clientType,
    redirectUris: redirects.kept,
    postLogoutRedirectUris: logouts.kept,
    grantTypes,
    ...(dropped.length > 0 ? { dropped: `redirect URIs Porta cannot compare exactly were left out: ${dropped.join(" ").slice(0, 500)}` } : {}),
  };
  if (BUILT_IN_CLIENTS.has(client.clientId)) return { ...base, skip: "one of Keycloak's own clients" };
  if ((client.protocol ?? "openid-connect") !== "openid-connect") return { ...base, skip: `a ${client.protocol} client (Porta's clients are OpenID Connect)` };
  if (client.bearerOnly) return { ...base, skip: "bearer-only: an API, not a client (register it as an API resource)" };
  if (grantTypes.length === 0) return { ...base, skip: "no flow Porta offers is enabled (standard flow or service accounts)" };
  return base;
}

/** Roles every Keycloak realm has for its own purposes; they mean nothing in Porta. */
function builtIn(name: string, realm: string) {
  return name === "offline_access" || name === "uma_authorization" || name === `default-roles-${realm.toLowerCase()}`;
}

const Argon2Parameters = z.object({
  hashLength: z.array(z.string()).optional(),
  memory: z.array(z.string()),
  type: z.array(z.enum(["id", "i", "d"])),
  version: z.array(z.enum(["1.3", "1.0"])),
  parallelism: z.array(z.string()),
});
const Argon2Credential = z.object({ algorithm: z.literal("argon2"), hashIterations: z.number().int(), additionalParameters: Argon2Parameters });
const SecretData = z.object({ value: z.string(), salt: z.string() });

const unpadded = (base64: string) => base64.replace(/=+$/, "");

/**
 * Keycloak 24 and later hash with Argon2 by default and keep its parameters in `credentialData`;
 * the same hash as a PHC string is a form Porta already imports. Null when the credential is not
 * Keycloak's Argon2.
 */
function argon2Phc(secretData: string, credentialData: string): string | null {
  try {
    const credential = Argon2Credential.safeParse(JSON.parse(credentialData));
    const secret = SecretData.safeParse(JSON.parse(secretData));
    if (!credential.success || !secret.success) return null;
    const p = credential.data.additionalParameters;
    const version = p.version[0] === "1.3" ? 19 : 16;
    return `$argon2${p.type[0]}$v=${version}$m=${Number(p.memory[0])},t=${credential.data.hashIterations},p=${Number(p.parallelism[0])}$${unpadded(secret.data.salt)}$${unpadded(secret.data.value)}`;
  } catch {
    return null;
  }
}

/** The user's password credential as `users.create` takes it, or null without one. */
function passwordOf(credentials: z.infer<typeof Credential>[]): ImportedPasswordHash | null {
  const password = credentials.find((c) => c.type === "password");
  if (!password || password.secretData === undefined || password.credentialData === undefined) return null;
  return argon2Phc(password.secretData, password.credentialData) ?? { format: "keycloak", secretData: password.secretData, credentialData: password.credentialData };
}

const OtpParameters = z.object({ subType: z.string(), digits: z.number(), period: z.number(), algorithm: z.string() });

/**
 * Keycloak keeps a TOTP secret as text and keys the HMAC with that text's UTF-8 bytes (its QR code
 * shows their base32), so Porta stores the base32 of those bytes. Only what Porta's TOTP checks
 * (SHA-1, 6 digits, 30 s) is carried; HOTP and other parameters are reported instead.
 */
function totpOf(credentials: z.infer<typeof Credential>[]): { totpSecret: string | null; totpProblem?: string } {
  const otp = credentials.find((c) => c.type === "otp");
  if (!otp) return { totpSecret: null };
  try {
    const parameters = OtpParameters.safeParse(JSON.parse(otp.credentialData ?? "{}"));
    const secret = SecretData.pick({ value: true }).safeParse(JSON.parse(otp.secretData ?? "{}"));
    if (!parameters.success || !secret.success || secret.data.value === "") return { totpSecret: null, totpProblem: "the OTP credential has no secret or parameters Porta can read" };
    const p = parameters.data;
    if (p.subType !== "totp" || p.digits !== TOTP_DIGITS || p.period !== TOTP_PERIOD_SECONDS || p.algorithm !== "HmacSHA1") {
      return { totpSecret: null, totpProblem: `Porta checks TOTP with SHA-1, ${TOTP_DIGITS} digits and ${TOTP_PERIOD_SECONDS}-second steps; this one is ${p.subType}, ${p.algorithm}, ${p.digits} digits, ${p.period} s` };
    }
    return { totpSecret: totpSecretOfBytes(Buffer.from(secret.data.value, "utf8")) };
  } catch {
    return { totpSecret: null, totpProblem: "the OTP credential is not JSON" };
  }
}

export function parseKeycloakExport(text: string): ImportSource {
  // Measured before it is parsed, as the Admin API measures its bodies: deep nesting is slow to parse and walk.
  if (textNestsDeeperThan(text)) throw validation([{ field: "data", message: `nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep` }]);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw validation([{ field: "data", message: "is not JSON (a Keycloak realm export is one JSON document)" }]);
  }
  const parsed = KeycloakRealmSchema.safeParse(json);
  if (!parsed.success) throw refuseShape(parsed.error, "data");
  const { realm } = parsed.data;
  const skipped: UserImportSkip[] = [];
  const roles = new Map<string, SourceRole>();
  for (const role of parsed.data.roles?.realm ?? []) {
    if (!builtIn(role.name, realm)) roles.set(role.name, { name: role.name, description: role.description?.trim() || null });
  }
  const users: SourceUser[] = [];
  for (const [row, user] of (parsed.data.users ?? []).entries()) {
    const sourceId = user.username ?? null;
    const email = emailOf(user.email);
    if (email === null) {
      skipped.push({ row, sourceId, email: null, reason: "no_email" });
      continue;
    }
    const userRoles = (user.realmRoles ?? []).filter((name) => !builtIn(name, realm));
    // A role a user holds that the file does not list (the per-file users of a directory export).
    for (const name of userRoles) if (!roles.has(name)) roles.set(name, { name, description: null });
    users.push({
      row,
      sourceId,
      email,
      givenName: nameOf(user.firstName),
      familyName: nameOf(user.lastName),
      emailVerified: user.emailVerified ?? false,
      active: user.enabled ?? true,
      passwordHash: passwordOf(user.credentials ?? []),
      roles: userRoles,
      ...totpOf(user.credentials ?? []),
    });
  }
  return { users, roles: [...roles.values()], skipped, clients: (parsed.data.clients ?? []).map(clientOf) };
}
