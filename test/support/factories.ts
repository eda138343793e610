import { randomBytes } from "node:crypto";
import type { PrismaClient } from "~/generated/prisma/client";
import { hashPassword } from "~/.server/auth/password-hash";
import { hashClientSecret } from "~/.server/directory/clients";

/**
 * Test data written straight through Prisma (the Admin API arrives later). Each call makes
 * unique names, so tests in one database never collide.
 */
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

export async function createOrganization(prisma: PrismaClient, data: { slug?: string; name?: string; status?: string; defaultLoginMethods?: string[] } = {}) {
  const slug = data.slug ?? unique("org");
  return prisma.organization.create({
    data: { slug, name: data.name ?? `Organization ${slug}`, status: data.status ?? "active", defaultLoginMethods: data.defaultLoginMethods ?? ["password", "magic_link"] },
  });
}

export async function createApplication(prisma: PrismaClient, organizationId: string, data: { name?: string; status?: string } = {}) {
  return prisma.application.create({ data: { organizationId, name: data.name ?? unique("app"), status: data.status ?? "active" } });
}

export interface ClientInput {
  id?: string;
  applicationId?: string;
  confidential?: boolean;
  applicationType?: "web" | "native";
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  grantTypes?: string[];
  scope?: string;
  loginMethods?: string[];
  status?: string;
  allowedCorsOrigins?: string[];
  skipConsent?: boolean;
  pkce?: "inherit" | "required" | "not_required";
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  tokenExchangeAudiences?: string[];
  initiateLoginUri?: string;
}

/** Creates a client; a confidential one gets one active secret, returned in plain text. */
export async function createClient(prisma: PrismaClient, organizationId: string, input: ClientInput = {}) {
  const confidential = input.confidential ?? true;
  const client = await prisma.client.create({
    data: {
      id: input.id ?? unique("client"),
      organizationId,
      applicationId: input.applicationId ?? null,
      name: "Test client",
      applicationType: input.applicationType ?? "web",
      tokenEndpointAuthMethod: confidential ? "client_secret_basic" : "none",
      redirectUris: input.redirectUris ?? ["https://rp.example.com/cb"],
      postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
      grantTypes: input.grantTypes ?? ["authorization_code", "refresh_token"],
      scope: input.scope ?? "openid profile email offline_access roles",
      loginMethods: input.loginMethods ?? [],
      status: input.status ?? "active",
      allowedCorsOrigins: input.allowedCorsOrigins ?? [],
      skipConsent: input.skipConsent ?? false,
      pkce: input.pkce ?? "inherit",
      accessTokenTtlSeconds: input.accessTokenTtlSeconds ?? null,
      refreshTokenTtlSeconds: input.refreshTokenTtlSeconds ?? null,
      tokenExchangeAudiences: input.tokenExchangeAudiences ?? [],
      initiateLoginUri: input.initiateLoginUri ?? null,
    },
  });
  const secret = confidential ? await addClientSecret(prisma, client.id) : undefined;
  return { client, secret };
}

export async function addClientSecret(prisma: PrismaClient, clientId: string) {
  const secret = randomBytes(32).toString("base64url");
  const row = await prisma.clientSecret.create({ data: { clientId, secretHash: hashClientSecret(secret), hint: secret.slice(-4) } });
  return { value: secret, id: row.id };
}

export async function createUser(
  prisma: PrismaClient,
  organizationId: string,
  data: { email?: string; password?: string | null; status?: string; givenName?: string; familyName?: string; emailVerified?: boolean } = {},
) {
  const password = data.password === undefined ? "a long test password 1" : data.password;
  return prisma.user.create({
    data: {
      organizationId,
      email: data.email ?? `${unique("user")}@example.com`,
      emailVerified: data.emailVerified ?? true,
      givenName: data.givenName ?? "Ada",
      familyName: data.familyName ?? "Lovelace",
      passwordHash: password === null ? null : await hashPassword(password),
      status: data.status ?? "active",
    },
  });
}

export async function giveRole(prisma: PrismaClient, organizationId: string, userId: string, roleName: string) {
  const role = await prisma.role.upsert({
    where: { organizationId_name: { organizationId, name: roleName } },
    create: { organizationId, name: roleName },
    update: {},
  });
  await prisma.userRole.create({ data: { userId, roleId: role.id } });
  return role;
}

/**
 * Gives the user a role holding permissions named `names` (created when missing): how a person
 * is granted an API resource's scopes of the same names (decision 077).
 */
export async function giveRoleWithPermissions(prisma: PrismaClient, organizationId: string, userId: string, roleName: string, names: readonly string[]) {
  const role = await giveRole(prisma, organizationId, userId, roleName);
  for (const name of names) {
    const permission = await prisma.permission.upsert({ where: { organizationId_name: { organizationId, name } }, create: { organizationId, name }, update: {} });
    await prisma.rolePermission.create({ data: { roleId: role.id, permissionId: permission.id } });
  }
  return role;
}
