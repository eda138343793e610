interface IssuedToken {
  jti: string;
  kind: string;
  exp?: number;
  constructor: { IN_PAYLOAD: string[] };
  adapter: { upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<unknown> };
}

/**
 * oidc-provider issues JWT access tokens without storing them, which would leave them outside
 * userinfo, introspection, revocation and grant revocation. Registered as the JWT format
 * customizer (awaited before signing), this stores each one under its `jti` through the
 * model's own adapter (PostgreSQL for AccessToken, the ephemeral store for ClientCredentials).
 */
export async function storeJwtAccessToken(token: unknown, jwtPayload: Record<string, unknown>): Promise<void> {
  const issued = token as IssuedToken;
  const source = token as Record<string, unknown>;
  const payload: Record<string, unknown> = { kind: issued.kind };
  for (const key of issued.constructor.IN_PAYLOAD) {
    if (key !== "format" && source[key] !== undefined) payload[key] = source[key];
  }
  payload.iat = jwtPayload.iat;
  payload.exp = jwtPayload.exp;
  const expiresIn = Math.max(1, Number(jwtPayload.exp) - Math.floor(Date.now() / 1000));
  await issued.adapter.upsert(issued.jti, payload, expiresIn);
}

