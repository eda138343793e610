/**
 * Porta as a benchmark target, in its own process: started through startPorta exactly as
 * server.ts does (production build, silent logger), then seeded with one organization, one
 * confidential client and one user. Prints one JSON line (see flow.ts ServerInfo) on stdout.
 *
 * Env: PORT, DATA_DIR (a temp folder), optional DATABASE_URL, REDIS_URL, REDIS_PREFIX,
 * SEED_REFRESH_TOKENS (the size of the refresh-token pool) and SEED_REFRESH_FLOWS (how many of
 * them come from full authorization-code flows; see flow.ts seedRefreshPool),
 * BENCH_PROFILE_DIR (see flow.ts profileOnSignal), SEED_ADMIN_LIST_USERS (users of the Admin API
 * list benchmark's organization; see admin-list-seed.ts).
 */
import { randomBytes } from "node:crypto";
import { parseConfig } from "../app/.server/config/env";
import { hashClientSecret } from "../app/.server/directory/clients";
import { createLogger } from "../app/.server/logging/logger";
import { recordConsent, recordLogin } from "../app/.server/oidc/interaction-results";
import { startPorta } from "../app/.server/start";
import { seedAdminList } from "./admin-list-seed";
import { FLOW_SCOPE, REDIRECT_URI, announce, onStop, profileOnSignal, seedRefreshPool } from "./flow";

const SLUG = "bench";
const CLIENT_ID = "bench-client";

async function main() {
  const port = Number(process.env.PORT);
  if (!port) throw new Error("PORT is required");
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = parseConfig({
    NODE_ENV: "production",
    PORT: String(port),
    BASE_URL: baseUrl,
    DATA_DIR: process.env.DATA_DIR,
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    LOG_LEVEL: "silent",
  });
  const porta = await startPorta(config, createLogger("silent"), {
    host: "127.0.0.1",
    ...(process.env.REDIS_PREFIX ? { redisPrefix: process.env.REDIS_PREFIX } : {}),
  });
  onStop(() => porta.close(2_000));

  const prisma = porta.services.db.prisma;
  const organization = await prisma.organization.create({ data: { slug: SLUG, name: "Bench", defaultLoginMethods: ["password"] } });
  await prisma.client.create({
    data: {
      id: CLIENT_ID,
      organizationId: organization.id,
      name: "Bench client",
      applicationType: "web",
      tokenEndpointAuthMethod: "client_secret_basic",
      redirectUris: [REDIRECT_URI],
      grantTypes: ["client_credentials", "authorization_code", "refresh_token"],
      scope: `${FLOW_SCOPE} roles`,
    },
  });
  const secret = randomBytes(32).toString("base64url");
  await prisma.clientSecret.create({ data: { clientId: CLIENT_ID, secretHash: hashClientSecret(secret), hint: secret.slice(-4) } });
  const user = await prisma.user.create({
    data: { organizationId: organization.id, email: "bench@example.com", emailVerified: true, givenName: "Ada", familyName: "Lovelace" },
  });

  const tenant = await porta.services.oidc.get(SLUG);
  if (!tenant) throw new Error("the bench organization has no provider");
  const issuer = tenant.issuer;

  const seeded = await seedRefreshPool(tenant.provider, {
    count: Number(process.env.SEED_REFRESH_TOKENS ?? 0),
    flows: Number(process.env.SEED_REFRESH_FLOWS ?? 50),
    authorizationEndpoint: `${issuer}/auth/authorize`,
    tokenEndpoint: `${issuer}/auth/token`,
    clientId: CLIENT_ID,
    secret,
    async finishInteraction(uid) {
      const interaction = await tenant.provider.Interaction.find(uid);
      if (!interaction) throw new Error(`interaction ${uid} not found`);
      return interaction.prompt.name === "login"
        ? recordLogin(interaction, { accountId: user.id, amr: ["pwd"] })
        : recordConsent(tenant.provider, interaction);
    },
  });

  const listUsers = Number(process.env.SEED_ADMIN_LIST_USERS ?? 0);
  const adminList = listUsers > 0 ? await seedAdminList(porta, listUsers) : undefined;

  await profileOnSignal("porta");
  announce({
    url: porta.url,
    slug: SLUG,
    issuer,
    clientId: CLIENT_ID,
    secret,
    pid: process.pid,
    refreshTokens: seeded.refreshTokens,
    ...(seeded.userAccessToken ? { userAccessToken: seeded.userAccessToken } : {}),
    seeding: seeded.report,
    ...(adminList ? { adminList } : {}),
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`porta-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}${error instanceof Error && error.cause ? ` (cause: ${String(error.cause)})` : ""}\n`);
  process.exit(1);
});
