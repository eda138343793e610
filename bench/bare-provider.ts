/**
 * The baseline: a bare oidc-provider (same version as Porta's) on plain node:http with the
 * default in-memory adapter, one ES256 key and one static confidential client. Its
 * configuration mirrors app/.server/oidc/provider/configuration.ts wherever that applies without a
 * database: ES256 only, the same scopes, claims, lifetimes, features, refresh-token rotation and
 * JWT access tokens (ES256) for a default resource (the issuer). What it leaves out is Porta's
 * own work: Express/Helmet/Remix around the provider, the registry, the Prisma/store adapters,
 * hashed client secrets and storing JWT access tokens for introspection.
 *
 * Storage is oidc-provider's own in-memory adapter (the one it uses when none is configured) with
 * a larger LRU: the default keeps only 1,000 to 2,000 entries and would evict the refresh-token pool.
 *
 * One addition for the introspection figure only: oidc-provider cannot introspect JWTs it did not
 * store, so a second resource, urn:bench:opaque, issues opaque access tokens when it is asked for.
 *
 * Env: PORT, SEED_REFRESH_TOKENS, SEED_REFRESH_FLOWS, BENCH_PROFILE_DIR (as for porta-server.ts).
 * Prints one JSON line (see flow.ts ServerInfo) on stdout.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import MemoryAdapter from "oidc-provider/lib/adapters/memory_adapter.js";
import LRU from "oidc-provider/lib/helpers/lru.js";
import { recordConsent, recordLogin } from "../app/.server/oidc/provider/interaction-results";
import { LIFETIMES } from "../app/.server/oidc/provider/lifetimes";
import { FLOW_SCOPE, REDIRECT_URI, announce, onStop, profileOnSignal, seedRefreshPool } from "./flow";

export const OPAQUE_RESOURCE = "urn:bench:opaque";
const CLIENT_ID = "bench-client";
const ACCOUNT_ID = "0190c0de-0000-7000-8000-000000000001";
const ES256_ONLY = ["ES256"];
const SCOPES = ["openid", "offline_access", "profile", "email", "roles"];
const CLAIMS: Record<string, string[]> = {
  openid: ["sub"],
  profile: ["name", "given_name", "family_name", "locale", "updated_at"],
  email: ["email", "email_verified"],
  roles: ["roles"],
};

async function main() {
  const port = Number(process.env.PORT);
  if (!port) throw new Error("PORT is required");
  const issuer = `http://127.0.0.1:${port}`;
  const secret = randomBytes(32).toString("base64url");

  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString("hex"), alg: "ES256", use: "sig" };

  const storage = new LRU({ maxSize: 1_000_000 });
  const configuration: Configuration = {
    adapter: (model: string) => new MemoryAdapter(model, storage),
    jwks: { keys: [jwk] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: secret,
        client_name: "Bench client",
        application_type: "web",
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: ["client_credentials", "authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: [REDIRECT_URI],
        post_logout_redirect_uris: [],
        scope: `${FLOW_SCOPE} roles`,
        id_token_signed_response_alg: "ES256",
      },
    ],
    async findAccount(_ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: "bench@example.com",
            email_verified: true,
            given_name: "Ada",
            family_name: "Lovelace",
            name: "Ada Lovelace",
            updated_at: Math.floor(Date.now() / 1000),
          };
        },
      };
    },
    scopes: SCOPES,
    claims: CLAIMS,
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    clientDefaults: {
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: "ES256",
      introspection_signed_response_alg: "ES256",
      token_endpoint_auth_method: "client_secret_basic",
    },
    enabledJWA: {
      idTokenSigningAlgValues: ES256_ONLY,
      userinfoSigningAlgValues: ES256_ONLY,
      introspectionSigningAlgValues: ES256_ONLY,
      authorizationSigningAlgValues: ES256_ONLY,
      requestObjectSigningAlgValues: ES256_ONLY,
      clientAuthSigningAlgValues: ES256_ONLY,
      dPoPSigningAlgValues: ES256_ONLY,
    } as Configuration["enabledJWA"],
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction) => `/interaction/${interaction.uid}`,
    },
    cookies: {
      keys: [randomBytes(32).toString("base64url")],
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    ttl: { ...LIFETIMES },
    rotateRefreshToken: true,
    async issueRefreshToken(_ctx, client, code) {
      return client.grantTypeAllowed("refresh_token") && code.scopes.has("offline_access");
    },
    clientBasedCORS(_ctx, origin, client) {
      return client.redirectUris?.some((uri) => URL.canParse(uri) && new URL(uri).origin === origin) ?? false;
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        async allowedPolicy(_ctx, client) {
          return client.clientAuthMethod !== "none";
        },
      },
      jwtIntrospection: { enabled: true },
      jwtUserinfo: { enabled: true },
      revocation: { enabled: true },
      pushedAuthorizationRequests: { enabled: true },
      dPoP: { enabled: true },
      requestObjects: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      userinfo: { enabled: true },
      resourceIndicators: {
        enabled: true,
        async defaultResource(_ctx, _client, oneOf) {
          return oneOf ?? issuer;
        },
        async useGrantedResource() {
          return true;
        },
        async getResourceServerInfo(_ctx, resourceIndicator, client) {
          const allowed = new Set((client.scope ?? SCOPES.join(" ")).split(" "));
          const scope = SCOPES.filter((s) => allowed.has(s)).join(" ");
          if (resourceIndicator === OPAQUE_RESOURCE) {
            return { scope, audience: OPAQUE_RESOURCE, accessTokenFormat: "opaque", accessTokenTTL: LIFETIMES.AccessToken };
          }
          if (resourceIndicator !== issuer) throw new errors.InvalidTarget();
          return { scope, audience: issuer, accessTokenFormat: "jwt", accessTokenTTL: LIFETIMES.AccessToken, jwt: { sign: { alg: "ES256" } } };
        },
      },
    },
  };

  const provider = new Provider(issuer, configuration);
  async function finishInteraction(uid: string): Promise<string> {
    const interaction = await provider.Interaction.find(uid);
    if (!interaction) throw new Error(`interaction ${uid} not found`);
    return interaction.prompt.name === "login" ? recordLogin(interaction, { accountId: ACCOUNT_ID, amr: ["pwd"] }) : recordConsent(provider, interaction);
  }
  // No sign-in pages here: a GET of an interaction is finished at once (the fixed account, no
  // password; or the consent its prompt asks for) and sent on to the resume URL, so that the
  // login bench can measure the engine's own authorization-code flow (login.ts measureBareFlow).
  const callback = provider.callback();
  const server = createServer((req, res) => {
    const uid = req.method === "GET" ? /^\/interaction\/([\w-]+)$/.exec(req.url ?? "")?.[1] : undefined;
    if (!uid) return void callback(req, res);
    finishInteraction(uid).then(
      (next) => void res.writeHead(303, { location: next }).end(),
      (error: unknown) => void res.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  onStop(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  const seeded = await seedRefreshPool(provider, {
    count: Number(process.env.SEED_REFRESH_TOKENS ?? 0),
    flows: Number(process.env.SEED_REFRESH_FLOWS ?? 50),
    authorizationEndpoint: `${issuer}/auth`,
    tokenEndpoint: `${issuer}/token`,
    clientId: CLIENT_ID,
    secret,
    finishInteraction,
  });

  await profileOnSignal("bare");
  announce({
    url: issuer,
    slug: "",
    issuer,
    clientId: CLIENT_ID,
    secret,
    pid: process.pid,
    refreshTokens: seeded.refreshTokens,
    ...(seeded.userAccessToken ? { userAccessToken: seeded.userAccessToken } : {}),
    seeding: seeded.report,
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`bare-provider: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
