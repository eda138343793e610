import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import type { AuthInfo } from "./auth-info.js";
import { BearerError, IssuerUnavailableError } from "./errors.js";

/** The algorithms Porta signs access tokens with: ES256 only. Anything else (none, HS256, RS256) is refused. */
export const ACCESS_TOKEN_ALGORITHMS = ["ES256"] as const;

export interface VerifierOptions {
  /** The organization's issuer, exactly as its discovery document states it, e.g. `https://id.example.com/acme`. */
  issuer: string;
  /** This API's resource identifier, exactly as registered in Porta: the tokens' `aud`. */
  resource: string;
  /** Seconds of clock skew allowed on `exp`, `nbf` and `iat`. Default 5. */
  clockToleranceSeconds?: number;
  /**
   * The key set's address. Default: `jwks_uri` of the issuer's discovery document, read once
   * (its `issuer` must be the one configured).
   */
  jwksUri?: string;
  /** Key set caching: a kid the cached set does not know refetches it, at most once per `cooldownMs` (default 30 s). */
  jwks?: { cooldownMs?: number; cacheMaxAgeMs?: number; timeoutMs?: number };
  /** For tests and proxies: the fetch used for discovery. Default: the global fetch. */
  fetch?: typeof fetch;
}

export interface Verifier {
  readonly issuer: string;
  readonly resource: string;
  /**
   * The token's grant, or a `BearerError`: `invalid_token` for anything wrong with the token
   * itself, `insufficient_scope` when it lacks one of `requiredScopes`; an
   * `IssuerUnavailableError` when the issuer's keys could not be read.
   */
  verify(token: string, requiredScopes?: readonly string[]): Promise<AuthInfo>;
}

const DISCOVERY_PATH = "/.well-known/openid-configuration";

async function discoverJwksUri(issuer: string, fetchImpl: typeof fetch): Promise<URL> {
  const response = await fetchImpl(`${issuer.replace(/\/$/, "")}${DISCOVERY_PATH}`, { headers: { accept: "application/json" }, redirect: "error" });
  if (!response.ok) throw new Error(`the issuer's discovery document answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (document.issuer !== issuer) throw new Error("the discovery document names another issuer");
  if (typeof document.jwks_uri !== "string") throw new Error("the discovery document has no jwks_uri");
  return new URL(document.jwks_uri);
}

function scopesOf(payload: JWTPayload): string[] {
  return typeof payload.scope === "string" ? payload.scope.split(" ").filter((scope) => scope.length > 0) : [];
}

/** A verifier of Porta access tokens for one resource. Nothing is fetched until the first token. */
export function createVerifier(options: VerifierOptions): Verifier {
  const { issuer, resource } = options;
  if (!URL.canParse(issuer)) throw new TypeError("issuer must be an absolute URL");
  if (!URL.canParse(resource) || resource.includes("#")) throw new TypeError("resource must be an absolute URL without a fragment");
  const fetchImpl = options.fetch ?? fetch;
  const clockTolerance = options.clockToleranceSeconds ?? 5;
  const resourceUrl = new URL(resource);

  let keySet: Promise<JWTVerifyGetKey> | undefined;
  const keys = () => {
    keySet ??= (options.jwksUri ? Promise.resolve(new URL(options.jwksUri)) : discoverJwksUri(issuer, fetchImpl)).then((uri) =>
      createRemoteJWKSet(uri, { cooldownDuration: options.jwks?.cooldownMs, cacheMaxAge: options.jwks?.cacheMaxAgeMs, timeoutDuration: options.jwks?.timeoutMs }),
    );
    // A failed discovery is asked again at the next token rather than remembered.
    keySet.catch(() => {
      keySet = undefined;
    });
    return keySet;
  };

  return {
    issuer,
    resource,
    async verify(token, requiredScopes = []) {
      // The key set is looked up only for a token that parses: garbage never reaches the issuer.
      const getKey: JWTVerifyGetKey = async (header, input) => {
        let remote: JWTVerifyGetKey;
        try {
          remote = await keys();
        } catch (error) {
          throw new IssuerUnavailableError("the issuer's discovery document could not be read", { cause: error });
        }
        return remote(header, input);
      };
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          issuer,
          audience: resource,
          algorithms: [...ACCESS_TOKEN_ALGORITHMS],
          typ: "at+jwt",
          clockTolerance,
          requiredClaims: ["exp", "sub", "client_id"],
        }));
      } catch (error) {
        if (error instanceof IssuerUnavailableError) throw error;
        // jose reports a key set it could not fetch or parse as its generic error (code ERR_JOSE_GENERIC).
        if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || !(error instanceof errors.JOSEError) || error.code === "ERR_JOSE_GENERIC") {
          throw new IssuerUnavailableError("the issuer's keys could not be read", { cause: error });
        }
        throw new BearerError("invalid_token", describe(error), { cause: error });
      }
      // RFC 9449 §7.1: a DPoP-bound token presented as a bearer token is refused.
      if (payload.cnf !== undefined) throw new BearerError("invalid_token", "the token is bound to a key (DPoP) and cannot be used as a bearer token");
      if (typeof payload.client_id !== "string") throw new BearerError("invalid_token", "the token has no client_id");
      const scopes = scopesOf(payload);
      const missing = requiredScopes.filter((scope) => !scopes.includes(scope));
      if (missing.length > 0) throw new BearerError("insufficient_scope", `the token lacks the scope ${missing.join(" ")}`);
      const { client_id: clientId, ...extra } = payload;
      return { token, clientId, scopes, expiresAt: payload.exp, resource: resourceUrl, extra };
    },
  };
}

/** A public reason that names what was wrong, never the token or key material. */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted here`;
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not accepted";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey) return "the token was not signed by a key of the issuer";
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid || error instanceof errors.JOSENotSupported) return "the token is not a valid access token";
  return "the token could not be verified";
}
