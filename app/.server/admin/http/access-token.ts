import { createHash } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JWK } from "jose";
import type { ContextSource } from "../../context";

/**
 * What the Admin API's doors share to accept an access token: the bearer of the request, its
 * ES256 signature against the issuing organization's published keys (cached, and reloaded at most
 * once a second when a token names a key another process just activated, so that tokens naming
 * unknown keys cannot make every request load keys), and its record in the token store (a revoked
 * or expired token is gone from it).
 */
const BEARER = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/;

export function bearerTokenOf(request: Request): string | null {
  return BEARER.exec((request.headers.get("authorization") ?? "").trim())?.[1] ?? null;
}

interface CachedKeys {
  at: number;
  changes: number;
  jwks: ReturnType<typeof createLocalJWKSet>;
}

/** Published keys per running Porta (one process may run several, as the tests do) and issuer. */
const keyCaches = new WeakMap<ContextSource, Map<string, CachedKeys>>();
const KEY_CACHE_MS = 15_000;
const RELOAD_AT_MOST_EVERY_MS = 1_000;

async function keysOf(services: ContextSource, issuer: string, load: () => Promise<JWK[]>): Promise<CachedKeys> {
  let byIssuer = keyCaches.get(services);
  if (!byIssuer) keyCaches.set(services, (byIssuer = new Map()));
  const cached = byIssuer.get(issuer);
  // A key change this process made or noticed (a rotation, a retirement) counts at once.
  if (cached && Date.now() - cached.at <= KEY_CACHE_MS && cached.changes === services.keys.changeCount()) return cached;
  const changes = services.keys.changeCount();
  const entry = { at: Date.now(), changes, jwks: createLocalJWKSet({ keys: await load() }) };
  byIssuer.set(issuer, entry);
  return entry;
}

/** Verifies an ES256 token against `issuer`'s published keys (`load` reads them). */
export async function verifyIssuedToken(services: ContextSource, issuer: string, load: () => Promise<JWK[]>, token: string) {
  const cached = await keysOf(services, issuer, load);
  try {
    return await jwtVerify(token, cached.jwks, { algorithms: ["ES256"] });
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY" || Date.now() - cached.at < RELOAD_AT_MOST_EVERY_MS) throw error;
    keyCaches.get(services)?.delete(issuer);
    return jwtVerify(token, (await keysOf(services, issuer, load)).jwks, { algorithms: ["ES256"] });
  }
}

/** Whether the access token with this `jti` is still on record and unexpired. */
export async function isAccessTokenOnRecord(services: ContextSource, jti: string): Promise<boolean> {
  const stored = await services.db.prisma.oidcPayload.findUnique({
    where: { model_idHash: { model: "AccessToken", idHash: createHash("sha256").update(jti, "utf8").digest("base64url") } },
    select: { expiresAt: true },
  });
  return stored !== null && (stored.expiresAt === null || stored.expiresAt > new Date());
}
