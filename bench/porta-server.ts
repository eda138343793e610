/**
 * Porta as a benchmark target, in its own process: started through startPorta exactly as
 * server.ts does (production build, silent logger), then seeded with one organization, one
 * confidential client and one user. Prints one JSON line (see flow.ts ServerInfo) on stdout.
 *
 * Env: PORT, DATA_DIR (a temp folder), optional DATABASE_URL, REDIS_URL, REDIS_PREFIX,
 * SEED_REFRESH_TOKENS (the size of the refresh-token pool) and SEED_REFRESH_FLOWS (how many of
 * them come from full authorization-code flows; see flow.ts seedRefreshPool),
 * BENCH_PROFILE_DIR (see flow.ts profileOnSignal), SEED_ADMIN_LIST_USERS (users of the Admin API
 * list benchmark's organization; see admin-list-seed.ts), SEED_LOGIN_USERS (accounts of the
 * password-login benchmark, all with one password hashed once with Porta's parameters; see login.ts).
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { parseConfig } from "../app/.server/config/env";
import { hashClientSecret } from "../app/.server/directory/clients";
import { createLogger } from "../app/.server/logging/logger";
import { recordConsent, recordLogin } from "../app/.server/oidc/provider/interaction-results";
import type { Services } from "../app/.server/services";
import { startPorta } from "../app/.server/start";
import { seedAdminList } from "./admin-list-seed";
import { BENCH_RESOURCE, FLOW_SCOPE, REDIRECT_URI, announce, loginEmail, onStop, profileOnSignal, seedRefreshPool, type LoginUsersSeed } from "./flow";

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
    // bench/audit-sink.ts measures sign-ins with a deployment audit sink that is down.
    AUDIT_SINKS: process.env.AUDIT_SINKS,
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS,
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
  const resource = await prisma.apiResource.create({
    data: { organizationId: organization.id, identifier: BENCH_RESOURCE.identifier, name: "Bench orders", scopes: [...BENCH_RESOURCE.scopes] },
  });
  await prisma.clientResourceGrant.create({ data: { clientId: CLIENT_ID, resourceId: resource.id, scopes: [...BENCH_RESOURCE.scopes] } });
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

  const loginUsers = await seedLoginUsers(porta.services, organization.id, Number(process.env.SEED_LOGIN_USERS ?? 0));

  const listUsers = Number(process.env.SEED_ADMIN_LIST_USERS ?? 0);
  const adminList = listUsers > 0 ? await seedAdminList(porta, listUsers) : undefined;

  await profileOnSignal("porta");
  const statementsUrl = await countStatements(porta.services);
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
    ...(loginUsers ? { loginUsers } : {}),
    statementsUrl,
  });
}

/**
 * Counts every statement Prisma sends and answers the count on a loopback port of its own, so that
 * the runner can give statements per request (each costs ~1.4 ms of CPU embedded, ~0.55 ms on PostgreSQL).
 */
async function countStatements(services: Services): Promise<string> {
  let statements = 0;
  services.db.onQuery(() => statements++);
  const server = createServer((_req, res) => res.end(String(statements)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the statement counter has no port");
  return `http://127.0.0.1:${address.port}/`;
}

/** The accounts of the password-login benchmark: one hash (Argon2id at Porta's parameters) for all. */
async function seedLoginUsers(services: Services, organizationId: string, count: number): Promise<LoginUsersSeed | undefined> {
  if (count <= 0) return undefined;
  const password = randomBytes(12).toString("base64url");
  const passwordHash = await services.passwords.hash(password);
  const rows = Array.from({ length: count }, (_, i) => ({ organizationId, email: loginEmail(i), emailVerified: true, givenName: "Login", familyName: `No. ${i}`, passwordHash }));
  for (let i = 0; i < rows.length; i += 1_000) await services.db.prisma.user.createMany({ data: rows.slice(i, i + 1_000) });
  return { count, password };
}

main().catch((error: unknown) => {
  process.stderr.write(`porta-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}${error instanceof Error && error.cause ? ` (cause: ${String(error.cause)})` : ""}\n`);
  process.exit(1);
});
