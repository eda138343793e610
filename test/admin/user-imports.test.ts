import argon2 from "argon2";
import bcrypt from "bcryptjs";
import { createHmac, pbkdf2Sync, randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UserImportReport } from "~/schemas/user-import";
import { matchTotpStep, totpAad } from "~/.server/auth/two-factor/totp";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startAuthorization } from "../support/browser";
import { signInWithPassword, submitCode, type Step } from "../two-factor/helpers";
import { createTenant, expect422, expectError, RP_CALLBACK, signIn, unique, type Tenant } from "./helpers";

/**
 * Users imported from a Keycloak realm export and an Auth0 user export (decision 087): the
 * preview writes nothing, the apply creates users with their old password hashes, realm roles and
 * role mappings, skips what it cannot take with a reason per row, a real sign-in with the old
 * password works and leaves plain Argon2id behind, a second apply changes nothing, and bad input
 * is refused with field details.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
/** Audit writes to let through before the next one fails (null: none fails). */
let auditsBeforeFault: number | null = null;

beforeAll(async () => {
  porta = await startTestPorta({
    faults: {
      beforeAudit: () => {
        if (auditsBeforeFault === null) return;
        if (auditsBeforeFault > 0) {
          auditsBeforeFault -= 1;
          return;
        }
        auditsBeforeFault = null;
        throw new Error("injected fault between a batch of the user import and its audit entry");
      },
    },
  });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;

/** A password credential as Keycloak stores it: PBKDF2-SHA256, a 512-bit key, base64 salt and key. */
function keycloakPassword(password: string, iterations = 1000) {
  const salt = randomBytes(16);
  const value = pbkdf2Sync(password, salt, iterations, 64, "sha256");
  return {
    id: randomUUID(),
    type: "password",
    createdDate: 1733140000000,
    secretData: JSON.stringify({ value: value.toString("base64"), salt: salt.toString("base64"), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm: "pbkdf2-sha256", additionalParameters: {} }),
  };
}

/** Keycloak's default since release 24: Argon2id, its parameters in credentialData's additionalParameters. */
async function keycloakArgon2Password(password: string) {
  const salt = randomBytes(16);
  const value = await argon2.hash(password, { type: argon2.argon2id, memoryCost: 7168, timeCost: 5, parallelism: 1, hashLength: 32, salt, raw: true });
  return {
    type: "password",
    secretData: JSON.stringify({ value: value.toString("base64"), salt: salt.toString("base64"), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: 5, algorithm: "argon2", additionalParameters: { hashLength: ["32"], memory: ["7168"], type: ["id"], version: ["1.3"], parallelism: ["1"] } }),
  };
}

/** A TOTP secret as Keycloak keeps it: text, whose UTF-8 bytes key the HMAC. */
const KEYCLOAK_OTP_SECRET = "w8Hk2QpZr5TnYb3LxVc1";

/** RFC 6238's code for a key and time, computed here without Porta's TOTP library. */
function rfc6238(key: Buffer, now = Date.now()) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(now / 1000 / 30)));
  const mac = createHmac("sha1", key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

function keycloakRealm(prefix: string, argon2Credential: { type: string; secretData: string; credentialData: string }) {
  const otp = { id: randomUUID(), type: "otp", secretData: JSON.stringify({ value: KEYCLOAK_OTP_SECRET }), credentialData: JSON.stringify({ subType: "totp", digits: 6, period: 30, algorithm: "HmacSHA1" }) };
  const otpSha256 = { ...otp, id: randomUUID(), credentialData: JSON.stringify({ subType: "totp", digits: 6, period: 30, algorithm: "HmacSHA256" }) };
  return {
    id: randomUUID(),
    realm: "acme",
    enabled: true,
    roles: {
      realm: [
        { id: randomUUID(), name: `${prefix}-editor`, description: "Edits things", composite: false, clientRole: false },
        { id: randomUUID(), name: `${prefix}-viewer`, composite: false, clientRole: false },
        { id: randomUUID(), name: "offline_access", description: "${role_offline-access}", composite: false },
        { id: randomUUID(), name: "uma_authorization", description: "${role_uma_authorization}", composite: false },
        { id: randomUUID(), name: "default-roles-acme", composite: true },
        { id: randomUUID(), name: "bad/role", composite: false },
      ],
      client: {},
    },
    users: [
      {
        id: randomUUID(),
        username: "alice",
        email: `${prefix}-Alice@Example.com`,
        emailVerified: true,
        enabled: true,
        firstName: "Alice",
        lastName: "Liddell",
        credentials: [keycloakPassword("alice's old keycloak password"), otp],
        realmRoles: [`${prefix}-editor`, "offline_access", "default-roles-acme", "bad/role"],
        clientRoles: { account: ["manage-account"] },
        requiredActions: [],
      },
      { id: randomUUID(), username: "bob", email: `${prefix}-bob@example.com`, emailVerified: false, enabled: false, firstName: "Bob", credentials: [otp], realmRoles: [`${prefix}-viewer`] },
      { id: randomUUID(), username: "service-account-x", enabled: true, credentials: [] },
      { id: randomUUID(), username: "alice2", email: `${prefix}-alice@example.com`, enabled: true, credentials: [keycloakPassword("other")] },
      {
        id: randomUUID(),
        username: "eve",
        email: `${prefix}-eve@example.com`,
        enabled: true,
        credentials: [{ type: "password", secretData: JSON.stringify({ value: "AAAA", salt: "AAAA" }), credentialData: JSON.stringify({ hashIterations: 1, algorithm: "md5-custom" }) }],
      },
      { id: randomUUID(), username: "mallory", email: "not an address", enabled: true },
      { id: randomUUID(), username: "greta", email: `${prefix}-greta@example.com`, emailVerified: true, enabled: true, credentials: [argon2Credential, otpSha256] },
    ],
    clients: [
      { clientId: "account", name: "${client_account}", enabled: true, publicClient: true, redirectUris: ["/realms/acme/account/*"] },
      {
        clientId: "shop-web",
        name: "Shop",
        enabled: true,
        protocol: "openid-connect",
        publicClient: false,
        standardFlowEnabled: true,
        serviceAccountsEnabled: true,
        secret: "keycloak-secret-never-copied",
        redirectUris: ["https://shop.example.com/callback", "https://shop.example.com/*"],
        attributes: { "post.logout.redirect.uris": "https://shop.example.com/bye##+" },
      },
      { clientId: "shop-spa", enabled: true, protocol: "openid-connect", publicClient: true, standardFlowEnabled: true, redirectUris: ["https://spa.example.com/"] },
      { clientId: "shop-api", enabled: true, protocol: "openid-connect", bearerOnly: true },
      { clientId: "https://sp.example.com/saml", enabled: true, protocol: "saml", redirectUris: ["https://sp.example.com/acs"] },
    ],
  };
}

const preview = (tenant: Tenant, body: unknown) => api.post<UserImportReport>(`/organizations/${tenant.org.id}/user-imports/preview`, body);
const apply = (tenant: Tenant, body: unknown) => api.post<UserImportReport>(`/organizations/${tenant.org.id}/user-imports/apply`, body);

describe("a Keycloak realm export", () => {
  let tenant: Tenant;
  let prefix: string;
  let body: { format: "keycloak"; data: string };

  beforeAll(async () => {
    tenant = await createTenant(porta);
    prefix = unique("kc");
    body = { format: "keycloak", data: JSON.stringify(keycloakRealm(prefix, await keycloakArgon2Password("greta's argon2 password"))) };
  });

  it("previews what it would do and writes nothing", async () => {
    const res = await preview(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ format: "keycloak", total: 6, created: 3, updated: 0, unchanged: 0, importedPasswords: 2, importedTotp: 2, rolesCreated: [`${prefix}-editor`, `${prefix}-viewer`] });
    expect(res.body.totpNotCarried).toEqual([{ row: 6, sourceId: "greta", email: `${prefix}-greta@example.com`, detail: expect.stringContaining("HmacSHA256") }]);
    expect(res.body.skipped.map((s) => [s.sourceId, s.reason])).toEqual([
      ["bad/role", "invalid_role_name"],
      ["service-account-x", "no_email"],
      ["alice2", "duplicate_email"],
      ["eve", "unsupported_credential"],
      ["mallory", "invalid_email"],
    ]);
    expect(res.body.clients.map((c) => [c.sourceId, c.outcome])).toEqual([
      ["account", "skipped"],
      ["shop-web", "create"],
      ["shop-spa", "create"],
      ["shop-api", "skipped"],
      ["https://sp.example.com/saml", "skipped"],
    ]);
    expect(res.body.clients[1]!.detail).toContain("https://shop.example.com/*");
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(0);
    expect(await prisma().role.count({ where: { organizationId: tenant.org.id } })).toBe(0);
    expect(await prisma().client.count({ where: { organizationId: tenant.org.id, name: { in: ["Shop", "shop-spa"] } } })).toBe(0);
  });

  it("applies: users with their state, roles without Keycloak's built-ins, mappings, one audit entry of counts", async () => {
    const res = await apply(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 3, updated: 0, unchanged: 0, batches: 1, rolesCreated: [`${prefix}-editor`, `${prefix}-viewer`] });
    const roles = await prisma().role.findMany({ where: { organizationId: tenant.org.id }, orderBy: { name: "asc" } });
    expect(roles.map((r) => [r.name, r.description])).toEqual([
      [`${prefix}-editor`, "Edits things"],
      [`${prefix}-viewer`, null],
    ]);
    const alice = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-alice@example.com` }, include: { roles: { include: { role: true } } } });
    expect(alice).toMatchObject({ givenName: "Alice", familyName: "Liddell", emailVerified: true, status: "active", legacyPassword: { scheme: "pbkdf2" } });
    expect(alice.passwordHash).toMatch(/^\$argon2id\$/);
    expect(alice.roles.map((r) => r.role.name)).toEqual([`${prefix}-editor`]);
    const bob = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-bob@example.com` }, include: { roles: { include: { role: true } } } });
    expect(bob).toMatchObject({ status: "inactive", emailVerified: false, passwordHash: null, legacyPassword: null });
    expect(bob.roles.map((r) => r.role.name)).toEqual([`${prefix}-viewer`]);
    // Clients: new ids and a new secret shown once in this answer, exact redirect URIs, the flows Keycloak enabled.
    const web = res.body.clients.find((c) => c.sourceId === "shop-web")!;
    expect(web).toMatchObject({ outcome: "created", clientId: expect.any(String), clientSecret: expect.any(String) });
    expect(web.clientSecret).not.toBe("keycloak-secret-never-copied");
    const webRow = await prisma().client.findUniqueOrThrow({ where: { id: web.clientId! } });
    expect(webRow).toMatchObject({ organizationId: tenant.org.id, name: "Shop", redirectUris: ["https://shop.example.com/callback"], postLogoutRedirectUris: ["https://shop.example.com/bye"], grantTypes: ["authorization_code", "refresh_token", "client_credentials"] });
    const spa = res.body.clients.find((c) => c.sourceId === "shop-spa")!;
    expect(spa).toMatchObject({ outcome: "created" });
    expect(spa.clientSecret).toBeUndefined();
    const granted = await fetch(`${tenant.issuer}/token`, { method: "POST", headers: { authorization: `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=client_credentials" });
    expect(granted.status).toBe(200);
    const clientEntries = await prisma().auditEntry.findMany({ where: { eventType: "client.created", organizationId: tenant.org.id } });
    expect(clientEntries).toHaveLength(2);
    expect(JSON.stringify(clientEntries)).not.toContain(web.clientSecret!);

    // Alice's authenticator app keeps working: the code it shows now is accepted by Porta's check.
    const totp = await prisma().totpCredential.findUniqueOrThrow({ where: { userId: alice.id } });
    expect(totp.status).toBe("enrolled");
    const stored = porta.services.encrypter.decrypt(totp.secretEncrypted, totpAad(alice.id));
    expect(matchTotpStep(stored, rfc6238(Buffer.from(KEYCLOAK_OTP_SECRET, "utf8")))).not.toBeNull();
    expect(matchTotpStep(stored, rfc6238(Buffer.from("another secret", "utf8")))).toBeNull();
    expect(totp.secretEncrypted).not.toContain(KEYCLOAK_OTP_SECRET);
    const greta = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-greta@example.com` }, include: { totp: true } });
    expect(greta.totp).toBeNull();
    const entries = await prisma().auditEntry.findMany({ where: { eventType: "user.imported", organizationId: tenant.org.id } });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.data).toMatchObject({ format: "keycloak", batch: 1, of: 1, created: 3, updated: 0, importedPasswords: 2 });
    const realm = JSON.parse(body.data) as ReturnType<typeof keycloakRealm>;
    expect(realm.users).toHaveLength(7);
    const secret = JSON.parse(realm.users[0]!.credentials![0]!.secretData!) as { value: string; salt: string };
    expect(JSON.stringify(entries[0])).not.toContain(secret.value.slice(0, 20));
    expect(JSON.stringify(alice)).not.toContain(secret.value.slice(0, 20));
  });

  it("the old Keycloak password and the code of the old authenticator app sign in through the login pages, and the stored hash becomes plain Argon2id", async () => {
    const start = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, scope: "openid" });
    const page = { ...start, html: await (await start.browser.get(start.interactionUrl)).text() };
    const step = await signInWithPassword(page, `${prefix}-alice@example.com`, "alice's old keycloak password");
    expect(step.kind).toBe("totp");
    const verified = await submitCode(start.browser, step as Step & { html: string }, rfc6238(Buffer.from(KEYCLOAK_OTP_SECRET, "utf8")));
    expect(["callback", "consent"]).toContain(verified.step?.kind);
    const alice = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-alice@example.com` } });
    expect(alice.legacyPassword).toBeNull();
    expect(alice.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await porta.services.passwords.verify(alice.passwordHash!, "alice's old keycloak password")).toBe(true);
  });

  it("a Keycloak Argon2 credential signs in with the old password too", async () => {
    const before = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-greta@example.com` } });
    expect(before.legacyPassword).toMatchObject({ scheme: "argon2", type: "argon2id", memoryCost: 7168, timeCost: 5 });
    await expect(signIn(tenant, { email: `${prefix}-greta@example.com`, password: "wrong password" })).rejects.toThrow();
    await signIn(tenant, { email: `${prefix}-greta@example.com`, password: "greta's argon2 password" });
    const after = await prisma().user.findUniqueOrThrow({ where: { id: before.id } });
    expect(after.legacyPassword).toBeNull();
    expect(after.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it("a second apply changes nothing, and never puts the old hash back over the new password", async () => {
    const before = await prisma().user.findMany({ where: { organizationId: tenant.org.id }, orderBy: { email: "asc" } });
    const res = await apply(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 0, updated: 0, unchanged: 3, rolesCreated: [], batches: 0, importedPasswords: 0 });
    expect(res.body.clients.filter((c) => c.outcome === "exists").map((c) => c.sourceId)).toEqual(["shop-web", "shop-spa"]);
    expect(await prisma().auditEntry.count({ where: { eventType: "client.created", organizationId: tenant.org.id } })).toBe(2);
    const after = await prisma().user.findMany({ where: { organizationId: tenant.org.id }, orderBy: { email: "asc" } });
    expect(after).toEqual(before);
    expect(await prisma().auditEntry.count({ where: { eventType: "user.imported", organizationId: tenant.org.id } })).toBe(1);
  });

  it("an existing user gains a name and a role the source gives, and keeps password and status", async () => {
    const other = await createTenant(porta);
    const created = await api.post<{ id: string }>(`/organizations/${other.org.id}/users`, { email: `${prefix}-bob@example.com`, password: "Bob's own Porta password 1" });
    expect(created.status).toBe(201);
    const before = await prisma().user.findUniqueOrThrow({ where: { id: created.body.id } });
    const res = await apply(other, body);
    expect(res.body).toMatchObject({ created: 2, updated: 1, unchanged: 0 });
    const after = await prisma().user.findUniqueOrThrow({ where: { id: created.body.id }, include: { roles: { include: { role: true } } } });
    expect(after).toMatchObject({ givenName: "Bob", status: "active", passwordHash: before.passwordHash, legacyPassword: null });
    expect(after.roles.map((r) => r.role.name)).toEqual([`${prefix}-viewer`]);
    // The first organization's accounts are untouched by an import into another.
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(3);
  });
});

describe("an Auth0 user export", () => {
  it("imports bcrypt hashes that sign in, blocked users inactive, and a second apply changes nothing", async () => {
    const tenant = await createTenant(porta);
    const prefix = unique("a0");
    const lines = [
      { user_id: "auth0|1", email: `${prefix}-Carol@example.com`, email_verified: true, given_name: "Carol", family_name: "Danvers", name: "Carol Danvers", blocked: false, passwordHash: await bcrypt.hash("carol's auth0 password", 4) },
      { user_id: "auth0|2", email: `${prefix}-dan@example.com`, email_verified: false, name: "Dan", blocked: true, passwordHash: await bcrypt.hash("dan's password", 4) },
      { user_id: "google-oauth2|3", email: `${prefix}-gina@example.com`, email_verified: true, given_name: "Gina" },
      { user_id: "sms|4", phone_number: "+15550100" },
      { user_id: "auth0|5", email: `${prefix}-carol@example.com`, passwordHash: "not a hash" },
    ];
    const body = { format: "auth0", data: `${lines.map((l) => JSON.stringify(l)).join("\n")}\n` };
    const res = await apply(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ format: "auth0", created: 3, importedPasswords: 2, rolesCreated: [] });
    expect(res.body.skipped.map((s) => [s.row, s.sourceId, s.reason])).toEqual([
      [3, "sms|4", "no_email"],
      [4, "auth0|5", "duplicate_email"],
    ]);
    const dan = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-dan@example.com` } });
    expect(dan).toMatchObject({ status: "inactive", legacyPassword: { scheme: "bcrypt" } });
    const gina = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-gina@example.com` } });
    expect(gina).toMatchObject({ givenName: "Gina", emailVerified: true, passwordHash: null });

    await signIn(tenant, { email: `${prefix}-carol@example.com`, password: "carol's auth0 password" });
    const carol = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-carol@example.com` } });
    expect(carol).toMatchObject({ givenName: "Carol", familyName: "Danvers", emailVerified: true, legacyPassword: null });
    expect(carol.passwordHash).toMatch(/^\$argon2id\$/);

    const before = await prisma().user.findMany({ where: { organizationId: tenant.org.id }, orderBy: { email: "asc" } });
    const again = await apply(tenant, body);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 3 });
    expect(await prisma().user.findMany({ where: { organizationId: tenant.org.id }, orderBy: { email: "asc" } })).toEqual(before);
  });
});

describe("Auth0 metadata into custom claims", () => {
  it("carries mapped user_metadata and app_metadata values of new users into claims, reports values a claim's type refuses, and refuses another organization's claim", async () => {
    const tenant = await createTenant(porta);
    const app = await createApplication(prisma(), tenant.org.id);
    const plan = (await api.post<{ id: string }>(`/applications/${app.id}/claims`, { claimName: "plan", claimType: "string", scope: "billing" })).body;
    const seats = (await api.post<{ id: string }>(`/applications/${app.id}/claims`, { claimName: "seats", claimType: "number", scope: "billing" })).body;
    const prefix = unique("meta");
    const lines = [
      { user_id: "auth0|m1", email: `${prefix}-mia@example.com`, user_metadata: { plan: "pro" }, app_metadata: { billing: { seats: 12 } } },
      { user_id: "auth0|m2", email: `${prefix}-noa@example.com`, user_metadata: { plan: "team" }, app_metadata: { billing: { seats: "many" } } },
      { user_id: "auth0|m3", email: `${prefix}-oz@example.com` },
    ];
    const claims = [
      { source: "user_metadata.plan", claimId: plan.id },
      { source: "app_metadata.billing.seats", claimId: seats.id },
    ];
    const body = { format: "auth0", data: lines.map((l) => JSON.stringify(l)).join("\n"), claims };
    const res = await apply(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 3, claimValues: 3 });
    expect(res.body.claimValuesRefused).toEqual([{ row: 1, sourceId: "auth0|m2", source: "app_metadata.billing.seats", detail: expect.any(String) }]);
    const mia = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-mia@example.com` }, include: { claimValues: true } });
    expect(Object.fromEntries(mia.claimValues.map((v) => [v.claimId, v.value]))).toEqual({ [plan.id]: "pro", [seats.id]: 12 });

    const other = await createTenant(porta);
    const elsewhere = await createApplication(prisma(), other.org.id);
    const foreign = (await api.post<{ id: string }>(`/applications/${elsewhere.id}/claims`, { claimName: "plan", claimType: "string", scope: "billing" })).body;
    expect422(await apply(tenant, { ...body, claims: [{ source: "user_metadata.plan", claimId: foreign.id }] }), "claims.0.claimId");
    expect422(await apply(tenant, { format: "keycloak", data: "{}", claims }), "claims");
    expect422(await apply(tenant, { ...body, claims: [{ source: "profile.plan", claimId: plan.id }] }), "claims.0.source");
  });
});

describe("a CSV or JSON user list of any other source", () => {
  it("imports a CSV's bcrypt and Django PBKDF2 hashes that sign in, its roles and flags, and a second apply changes nothing", async () => {
    const tenant = await createTenant(porta);
    const prefix = unique("csv");
    const djangoSalt = "q9XpT2cLmN";
    const django = `pbkdf2_sha256$1000$${djangoSalt}$${pbkdf2Sync("erin's django password", djangoSalt, 1000, 32, "sha256").toString("base64")}`;
    const csv = [
      "email,given_name,family_name,email_verified,active,password_hash,roles,external_id",
      `${prefix}-erin@example.com,Erin,Ng,true,,${django},${prefix}-staff;${prefix}-ops,e1`,
      `${prefix}-finn@example.com,Finn,,true,true,${await bcrypt.hash("finn's password", 4)},${prefix}-staff,f2`,
      `${prefix}-gus@example.com,,,false,false,,,g3`,
    ].join("\n");
    const body = { format: "csv", data: csv };
    const planned = await preview(tenant, body);
    expect(planned.body).toMatchObject({ created: 3, importedPasswords: 2 });
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(0);
    const res = await apply(tenant, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ format: "csv", created: 3, importedPasswords: 2, skipped: [] });
    expect([...res.body.rolesCreated].sort()).toEqual([`${prefix}-ops`, `${prefix}-staff`]);
    const gus = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-gus@example.com` } });
    expect(gus).toMatchObject({ status: "inactive", emailVerified: false, passwordHash: null });

    await signIn(tenant, { email: `${prefix}-erin@example.com`, password: "erin's django password" });
    await signIn(tenant, { email: `${prefix}-finn@example.com`, password: "finn's password" });
    const erin = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: `${prefix}-erin@example.com` }, include: { roles: { include: { role: true } } } });
    expect(erin.legacyPassword).toBeNull();
    expect(erin.passwordHash).toMatch(/^\$argon2id\$/);
    expect(erin.roles.map((r) => r.role.name).sort()).toEqual([`${prefix}-ops`, `${prefix}-staff`]);

    const again = await apply(tenant, body);
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 3, rolesCreated: [] });
  });

  it("imports a JSON list with the same keys, and refuses a misspelt key by name", async () => {
    const tenant = await createTenant(porta);
    const prefix = unique("json");
    const res = await apply(tenant, { format: "json", data: JSON.stringify([{ email: `${prefix}-hal@example.com`, given_name: "Hal", email_verified: true, roles: [`${prefix}-crew`] }]) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 1, rolesCreated: [`${prefix}-crew`] });
    expect422(await apply(tenant, { format: "json", data: JSON.stringify([{ email: `${prefix}-ida@example.com`, pasword_hash: "x" }]) }), "data.0.pasword_hash");
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(1);
  });
});

describe("a large export", () => {
  it("commits in batches of 200 users, each with one audit entry of its counts", async () => {
    const tenant = await createTenant(porta);
    const prefix = unique("many");
    const data = Array.from({ length: 450 }, (_, i) => JSON.stringify({ user_id: `auth0|${i}`, email: `${prefix}-${i}@example.com`, email_verified: true })).join("\n");
    const res = await apply(tenant, { format: "auth0", data });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 450, batches: 3, skipped: [] });
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(450);
    const entries = await prisma().auditEntry.findMany({ where: { eventType: "user.imported", organizationId: tenant.org.id }, orderBy: { createdAt: "asc" } });
    expect(entries.map((e) => (e.data as { created: number; batch: number }).created)).toEqual([200, 200, 50]);
  }, 120_000);

  it("a batch that fails rolls back alone, and applying again finishes the import", async () => {
    const tenant = await createTenant(porta);
    const prefix = unique("half");
    const data = Array.from({ length: 450 }, (_, i) => JSON.stringify({ user_id: `auth0|${i}`, email: `${prefix}-${i}@example.com` })).join("\n");
    porta.logs.expectError("injected fault between a batch of the user import");
    auditsBeforeFault = 1;
    const failed = await apply(tenant, { format: "auth0", data });
    expectError(failed, 500);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(200);
    expect(await prisma().auditEntry.count({ where: { eventType: "user.imported", organizationId: tenant.org.id } })).toBe(1);
    const again = await apply(tenant, { format: "auth0", data });
    expect(again.body).toMatchObject({ created: 250, unchanged: 200, batches: 2 });
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(450);
  }, 120_000);
});

describe("hostile input", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(porta);
  });

  it.each([
    ["bad JSON", { format: "keycloak", data: "{ not json" }, "data"],
    ["users that are not a list", { format: "keycloak", data: JSON.stringify({ realm: "acme", users: { alice: {} } }) }, "data.users"],
    ["a realm without its name", { format: "keycloak", data: JSON.stringify({ users: [] }) }, "data.realm"],
    ["a NUL in a name", { format: "keycloak", data: JSON.stringify({ realm: "acme", users: [{ username: "x", email: "x@example.com", firstName: "A\u0000B" }] }) }, "data.users.0.firstName"],
    ["an Auth0 line that is not JSON", { format: "auth0", data: `${JSON.stringify({ email: "a@example.com" })}\n{oops` }, "data.1"],
    ["an Auth0 line of another shape", { format: "auth0", data: JSON.stringify({ email: 42 }) }, "data.0.email"],
    ["a NUL in an Auth0 name", { format: "auth0", data: JSON.stringify({ email: "n@example.com", given_name: "\u0000" }) }, "data.0.given_name"],
    ["a realm nested beyond the Admin API's depth", { format: "keycloak", data: `${"[".repeat(10_000)}${"]".repeat(10_000)}` }, "data"],
    ["an Auth0 line nested beyond the Admin API's depth", { format: "auth0", data: `{"email":"d@example.com"}\n${"{\"a\":".repeat(100)}1${"}".repeat(100)}` }, "data.1"],
    ["an unknown format", { format: "okta", data: "{}" }, "format"],
    ["an empty file", { format: "auth0", data: "" }, "data"],
  ])("%s is 422 naming the field, and writes nothing", async (_name, body, field) => {
    for (const send of [preview, apply]) expect422(await send(tenant, body), field);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(0);
  });

  it("a file beyond the import's size limit is 413", async () => {
    const res = await apply(tenant, { format: "auth0", data: "x".repeat(64 * 1024 * 1024 + 16) });
    expectError(res, 413);
  });

  it("an organization that does not exist is 404; without a token it is 401", async () => {
    const body = { format: "auth0", data: JSON.stringify({ email: "z@example.com" }) };
    expectError(await api.post(`/organizations/${randomUUID()}/user-imports/apply`, body), 404);
    const anonymous = adminApi(porta, undefined);
    expectError(await anonymous.post(`/organizations/${tenant.org.id}/user-imports/apply`, body), 401);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(0);
  });
});
