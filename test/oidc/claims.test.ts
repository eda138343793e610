import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateClient } from "~/.server/directory/clients";
import { createApplication, createClient, createOrganization, createUser, giveRole } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, oidcError, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;
let user: { id: string; email: string };
let config: oidc.Configuration;
let clientId: string;

const CB = "https://rp.example.com/cb";
const PROFILE = ["name", "given_name", "family_name", "updated_at"];
const EMAIL = ["email", "email_verified"];

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  // The custom claim exists before the organization's provider is first built.
  const application = await createApplication(prisma, org.id);
  const department = await prisma.customClaimDefinition.create({
    data: { applicationId: application.id, claimName: "department", claimType: "string", scope: "hr" },
  });
  const created = await createUser(prisma, org.id, { givenName: "Ada", familyName: "Lovelace" });
  user = { id: created.id, email: created.email };
  await prisma.customClaimValue.create({ data: { claimId: department.id, userId: user.id, value: "Engineering" } });
  await giveRole(prisma, org.id, user.id, "editor");
  await giveRole(prisma, org.id, user.id, "auditor");
  const { client, secret } = await createClient(prisma, org.id, { applicationId: application.id, scope: "openid profile email offline_access roles hr" });
  clientId = client.id;
  config = await clientConfiguration(porta, org, client, { secret: secret!.value });
});
afterAll(async () => {
  await porta?.stop();
});

async function claimsFor(scope: string) {
  const tokens = await codeFlow(porta, org, config, { accountId: user.id, scope, redirectUri: CB, params: { prompt: "consent" } });
  const idToken = (await verifyWithJwks(porta, org, tokens.id_token!, { audience: clientId })).payload as Record<string, unknown>;
  const userinfo = (await oidc.fetchUserInfo(config, tokens.access_token, user.id)) as Record<string, unknown>;
  return { idToken, userinfo, tokens };
}

const keysOf = (claims: Record<string, unknown>, names: string[]) => names.filter((n) => n in claims);

describe("claims filtered by scope, in userinfo and in the ID token", () => {
  it("releases only sub for `openid`", async () => {
    const { idToken, userinfo } = await claimsFor("openid");
    expect(userinfo).toEqual({ sub: user.id });
    for (const claims of [idToken, userinfo]) {
      expect(keysOf(claims, [...PROFILE, ...EMAIL, "roles", "department"])).toEqual([]);
    }
  });

  it("releases email claims only with `email`", async () => {
    const { idToken, userinfo } = await claimsFor("openid email");
    expect(userinfo).toEqual({ sub: user.id, email: user.email, email_verified: true });
    expect(idToken).toMatchObject({ email: user.email, email_verified: true });
    expect(keysOf(idToken, [...PROFILE, "roles", "department"])).toEqual([]);
  });

  it("releases profile claims only with `profile`", async () => {
    const { idToken, userinfo } = await claimsFor("openid profile");
    for (const claims of [idToken, userinfo]) {
      expect(claims).toMatchObject({ name: "Ada Lovelace", given_name: "Ada", family_name: "Lovelace" });
      expect(typeof claims.updated_at).toBe("number");
      expect(keysOf(claims, [...EMAIL, "roles", "department"])).toEqual([]);
    }
  });

  it("releases the role names only with `roles`", async () => {
    const { idToken, userinfo } = await claimsFor("openid roles");
    expect(userinfo).toEqual({ sub: user.id, roles: ["auditor", "editor"] });
    expect(idToken.roles).toEqual(["auditor", "editor"]);
    const without = await claimsFor("openid profile email");
    expect(without.userinfo.roles).toBeUndefined();
    expect(without.idToken.roles).toBeUndefined();
  });

  it("gives an empty role list to a user without roles", async () => {
    const prisma = porta.services.db.prisma;
    const plain = await createUser(prisma, org.id);
    const tokens = await codeFlow(porta, org, config, { accountId: plain.id, scope: "openid roles", redirectUri: CB });
    expect(await oidc.fetchUserInfo(config, tokens.access_token, plain.id)).toEqual({ sub: plain.id, roles: [] });
  });

  it("releases everything asked for together", async () => {
    const { idToken, userinfo } = await claimsFor("openid profile email roles hr");
    for (const claims of [idToken, userinfo]) {
      expect(claims).toMatchObject({ sub: user.id, email: user.email, given_name: "Ada", roles: ["auditor", "editor"], department: "Engineering" });
    }
  });

  it("keeps the access token free of profile claims", async () => {
    const { tokens } = await claimsFor("openid profile email roles hr");
    const { payload } = await verifyWithJwks(porta, org, tokens.access_token, { audience: issuerOf(porta, org) });
    expect(keysOf(payload, [...PROFILE, ...EMAIL, "roles", "department"])).toEqual([]);
  });
});

describe("custom claims", () => {
  it("are advertised in discovery with their scope", async () => {
    const discovery = (await (await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(discovery.scopes_supported).toContain("hr");
    expect(discovery.claims_supported).toContain("department");
  });

  it("appear only when their scope is granted", async () => {
    const granted = await claimsFor("openid hr");
    expect(granted.userinfo).toEqual({ sub: user.id, department: "Engineering" });
    expect(granted.idToken.department).toBe("Engineering");

    const notGranted = await claimsFor("openid profile");
    expect(notGranted.userinfo.department).toBeUndefined();
    expect(notGranted.idToken.department).toBeUndefined();
  });

  it("are not released to a client whose scope does not include theirs", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { scope: "openid profile email" });
    const narrow = await clientConfiguration(porta, org, client, { secret: secret!.value });
    // Asking for it is refused outright.
    expect(await oidcError(codeFlow(porta, org, narrow, { accountId: user.id, scope: "openid hr", redirectUri: CB }))).toMatchObject({ error: "invalid_scope" });
    const tokens = await codeFlow(porta, org, narrow, { accountId: user.id, scope: "openid profile", redirectUri: CB });
    expect(tokens.claims()?.department).toBeUndefined();
    expect((await oidc.fetchUserInfo(narrow, tokens.access_token, user.id)).department).toBeUndefined();
  });

  it("follow a definition added later once the provider is rebuilt", async () => {
    const prisma = porta.services.db.prisma;
    const application = await createApplication(prisma, org.id);
    const level = await prisma.customClaimDefinition.create({ data: { applicationId: application.id, claimName: "clearance", claimType: "number", scope: "security" } });
    await prisma.customClaimValue.create({ data: { claimId: level.id, userId: user.id, value: 3 } });
    await prisma.client.update({ where: { id: clientId }, data: { scope: "openid profile email offline_access roles hr security" } });
    await invalidateClient(porta.services.cache, clientId);
    await porta.services.oidc.invalidate(org.id);

    const { userinfo, idToken } = await claimsFor("openid security");
    expect(userinfo).toEqual({ sub: user.id, clearance: 3 });
    expect(idToken.clearance).toBe(3);
    expect(idToken.department).toBeUndefined();
  });
});
