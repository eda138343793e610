/**
 * Seeds Porta for the Admin API list benchmark: a real admin access token from an
 * authorization-code flow of a confidential client of the super-admin organization (the login
 * finished in-process for the bootstrap service-admin), taken first while the HTTP connections
 * of the earlier flows are fresh, then one organization with many users (written in batches
 * through Prisma, so ids are the same UUIDv7 the app writes).
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { ADMIN_API_SCOPES } from "../app/.server/admin/api-access";
import { SERVICE_ADMIN_ROLE } from "../app/.server/admin/permissions";
import { hashClientSecret } from "../app/.server/directory/clients";
import { recordConsent, recordLogin } from "../app/.server/oidc/provider/interaction-results";
import type { RunningPorta } from "../app/.server/start";
import { FLOW_SCOPE, REDIRECT_URI, obtainRefreshTokens, type AdminListSeed } from "./flow";

const BATCH = 5_000;
const CLIENT_ID = "bench-admin";

export async function seedAdminList(porta: RunningPorta, users: number): Promise<AdminListSeed> {
  const { prisma } = porta.services.db;
  const admin = await prisma.user.findFirst({
    where: { organization: { slug: porta.services.config.superAdminSlug }, roles: { some: { role: { name: SERVICE_ADMIN_ROLE } } } },
    select: { id: true },
  });
  if (!admin) throw new Error("no bootstrap service-admin to sign in as");
  const superAdmin = await porta.services.oidc.get(porta.services.config.superAdminSlug);
  if (!superAdmin) throw new Error("the super-admin organization has no provider");
  const secret = randomBytes(32).toString("base64url");
  await prisma.client.create({
    data: {
      id: CLIENT_ID,
      organizationId: (await prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } })).id,
      name: "Bench admin",
      applicationType: "web",
      tokenEndpointAuthMethod: "client_secret_basic",
      redirectUris: [REDIRECT_URI],
      grantTypes: ["authorization_code", "refresh_token"],
      scope: `${FLOW_SCOPE} roles`,
      // Its access tokens are for the Admin API only with this (decision 017).
      adminApiAccess: true,
      secrets: { create: { secretHash: hashClientSecret(secret), hint: secret.slice(-4) } },
    },
  });
  const flow = await obtainRefreshTokens({
    authorizationEndpoint: `${superAdmin.issuer}/auth/authorize`,
    tokenEndpoint: `${superAdmin.issuer}/auth/token`,
    clientId: CLIENT_ID,
    secret,
    count: 1,
    // An Admin API token carries every admin scope (decision 017); `roles` is not in FLOW_SCOPE.
    scope: `${ADMIN_API_SCOPES.join(" ")} offline_access`,
    async finishInteraction(uid) {
      const interaction = await superAdmin.provider.Interaction.find(uid);
      if (!interaction) throw new Error(`interaction ${uid} not found`);
      return interaction.prompt.name === "login"
        ? recordLogin(interaction, { accountId: admin.id, amr: ["pwd"] })
        : recordConsent(superAdmin.provider, interaction);
    },
  });
  if (!flow.userAccessToken) throw new Error("the admin flow returned no access token");
  const t0 = performance.now();
  const organization = await prisma.organization.create({ data: { slug: "bench-list", name: "Bench list" } });
  for (let start = 0; start < users; start += BATCH) {
    const size = Math.min(BATCH, users - start);
    await prisma.user.createMany({
      data: Array.from({ length: size }, (_, i) => ({
        organizationId: organization.id,
        email: `user${String(start + i).padStart(6, "0")}@bench.example`,
        emailVerified: true,
        givenName: "Bench",
        familyName: `User ${start + i}`,
      })),
    });
  }
  // A freshly loaded table: give the planner its statistics as a running system would have them.
  await prisma.$executeRawUnsafe('VACUUM ANALYZE "User"');
  const seedSeconds = (performance.now() - t0) / 1000;

  return { organizationId: organization.id, users, seedSeconds, accessToken: flow.userAccessToken };
}
