import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthInfo } from "./auth-info.js";
import { BearerError, IssuerUnavailableError } from "./errors.js";
import { protectedResourceMetadataHandler, protectedResourceMetadataPath, protectedResourceMetadataUrl } from "./metadata.js";
import { requireBearerAuth } from "./middleware.js";
import { createVerifier } from "./verify.js";

/**
 * Porta's access tokens as the organization's provider makes them (ES256, typ at+jwt, aud = the
 * resource, scope, client_id), signed with keys made here and served from a local issuer:
 * discovery and JWKS on node:http, its keys swapped to show a rotation.
 */
interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" } };
}

let issuerServer: Server;
let issuer: string;
let published: Key[] = [];
let jwksFetches = 0;
let current: Key;

const RESOURCE_A = "https://api.example.com/mcp";
const RESOURCE_B = "https://other.example.com/api";

beforeAll(async () => {
  current = await makeKey("k1");
  published = [current];
  issuerServer = createServer((req, res) => {
    if (req.url === "/acme/.well-known/openid-configuration") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/.well-known/jwks` }));
    } else if (req.url === "/acme/.well-known/jwks") {
      jwksFetches += 1;
      res.writeHead(200, { "content-type": "application/jwk-set+json" }).end(JSON.stringify({ keys: published.map((key) => key.jwk) }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => issuerServer.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}/acme`;
});
afterAll(() => new Promise<void>((resolve) => issuerServer.close(() => resolve())));

async function token(claims: JWTPayload = {}, options: { key?: Key; typ?: string; exp?: number | string } = {}): Promise<string> {
  const key = options.key ?? current;
  return new SignJWT({ scope: "tools:read tools:call", client_id: "mcp-client", ...claims })
    .setProtectedHeader({ alg: "ES256", typ: options.typ ?? "at+jwt", kid: key.kid })
    .setIssuer(typeof claims.iss === "string" ? claims.iss : issuer)
    .setSubject("user-1")
    .setAudience(claims.aud ?? RESOURCE_A)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? "5m")
    .sign(key.privateKey);
}

const verifierFor = (resource = RESOURCE_A) => createVerifier({ issuer, resource, jwks: { cooldownMs: 0 } });

async function refusal(promise: Promise<unknown>): Promise<BearerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BearerError);
  return error as BearerError;
}

describe("createVerifier", () => {
  it("accepts a token for its resource and gives the MCP SDK's AuthInfo", async () => {
    const jwt = await token();
    const auth = await verifierFor().verify(jwt, ["tools:call"]);
    expect(auth).toMatchObject({ token: jwt, clientId: "mcp-client", scopes: ["tools:read", "tools:call"], resource: new URL(RESOURCE_A) });
    expect(auth.expiresAt).toBeGreaterThan(Date.now() / 1000);
    expect(auth.extra).toMatchObject({ sub: "user-1", iss: issuer, aud: RESOURCE_A });
    expect(auth.extra).not.toHaveProperty("client_id");
  });

  it("never lets a token for one resource through at another", async () => {
    const forA = await token();
    const error = await refusal(verifierFor(RESOURCE_B).verify(forA));
    expect(error).toMatchObject({ code: "invalid_token", status: 401 });
    expect(error.message).toContain("aud");
    // A token naming several audiences passes where one of them is this resource.
    await expect(verifierFor(RESOURCE_B).verify(await token({ aud: [RESOURCE_A, RESOURCE_B] }))).resolves.toMatchObject({ clientId: "mcp-client" });
    // Compared exactly: a trailing slash or another case is another resource.
    await refusal(verifierFor(`${RESOURCE_A}/`).verify(forA));
    await refusal(verifierFor(RESOURCE_A.toUpperCase().replace("HTTPS://", "https://")).verify(forA));
  });

  it("refuses another issuer, an expired token and a token not yet valid", async () => {
    expect(await refusal(verifierFor().verify(await token({ iss: `${issuer}-other` })))).toMatchObject({ code: "invalid_token" });
    const expired = await refusal(verifierFor().verify(await token({}, { exp: Math.floor(Date.now() / 1000) - 60 })));
    expect(expired.message).toBe("the token has expired");
    await refusal(verifierFor().verify(await token({ nbf: Math.floor(Date.now() / 1000) + 600 })));
    // Within the clock tolerance, a token just expired still passes.
    await expect(verifierFor().verify(await token({}, { exp: Math.floor(Date.now() / 1000) - 2 }))).resolves.toBeDefined();
  });

  it("answers insufficient_scope naming what is missing", async () => {
    const error = await refusal(verifierFor().verify(await token({ scope: "tools:read" }), ["tools:read", "tools:call"]));
    expect(error).toMatchObject({ code: "insufficient_scope", status: 403 });
    expect(error.message).toContain("tools:call");
    await refusal(verifierFor().verify(await token({ scope: undefined }), ["tools:read"]));
  });

  it("refuses alg none, HS256, another typ, a DPoP-bound token and garbage", async () => {
    const [header, payload] = (await token()).split(".");
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt" })).toString("base64url")}.${payload}.`;
    expect((await refusal(verifierFor().verify(none))).code).toBe("invalid_token");
    const hs256 = await new SignJWT({ client_id: "mcp-client", scope: "tools:read" })
      .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: "k1" })
      .setIssuer(issuer)
      .setSubject("user-1")
      .setAudience(RESOURCE_A)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a shared secret of thirty-two bytes!"));
    expect((await refusal(verifierFor().verify(hs256))).message).toBe("the token's signing algorithm is not accepted");
    // An ID token (typ JWT) is not an access token.
    await refusal(verifierFor().verify(await token({}, { typ: "JWT" })));
    await refusal(verifierFor().verify(await token({ cnf: { jkt: "thumbprint" } })));
    await refusal(verifierFor().verify("not-a-jwt"));
    // A forged signature: the header and payload of a good token, another key's signature.
    const other = await token({}, { key: await makeKey("k1") });
    await refusal(verifierFor().verify(`${header}.${payload}.${other.split(".")[2]}`));
  });

  it("fetches the key set again for a kid it does not know (rotation)", async () => {
    const verifier = verifierFor();
    await verifier.verify(await token());
    const before = jwksFetches;
    await verifier.verify(await token());
    expect(jwksFetches).toBe(before);
    const next = await makeKey("k2");
    published = [current, next];
    await expect(verifier.verify(await token({}, { key: next }))).resolves.toMatchObject({ clientId: "mcp-client" });
    expect(jwksFetches).toBe(before + 1);
    // A kid the issuer never published is still refused after the refetch.
    await refusal(verifier.verify(await token({}, { key: await makeKey("k9") })));
    published = [current];
  });

  it("reports an issuer it cannot read as unavailable, not as a bad token", async () => {
    const verifier = createVerifier({ issuer: "http://127.0.0.1:1/acme", resource: RESOURCE_A });
    await expect(verifier.verify(await token())).rejects.toBeInstanceOf(IssuerUnavailableError);
    // A token that does not even parse is refused without asking the issuer.
    await expect(verifier.verify("not-a-jwt")).rejects.toBeInstanceOf(BearerError);
  });
});

function serve(handler: (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((done) => server.close(() => done())) }),
    ),
  );
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("requireBearerAuth and the metadata handler", () => {
  let api: { url: string; close: () => Promise<void> };
  const metadata = "https://api.example.com/.well-known/oauth-protected-resource/mcp";

  beforeAll(async () => {
    const metadataHandler = protectedResourceMetadataHandler({ resource: RESOURCE_A, issuer, scopesSupported: ["tools:read", "tools:call"], resourceName: "Example MCP" });
    const guard = requireBearerAuth({ verifier: verifierFor(), requiredScopes: ["tools:call"] });
    api = await serve((req, res) =>
      metadataHandler(req, res, () =>
        guard(req, res, () => {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ sub: req.auth?.extra?.sub, scopes: req.auth?.scopes }));
        }),
      ),
    );
  });
  afterAll(() => api.close());

  it("lets a good token through with req.auth", async () => {
    const answer = await get(`${api.url}/mcp`, { authorization: `Bearer ${await token()}` });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ sub: "user-1", scopes: ["tools:read", "tools:call"] });
  });

  it("answers 401 with the resource metadata and scope, and no error, without a token", async () => {
    for (const headers of [{}, { authorization: "Basic dXNlcjpwYXNz" }] as Array<Record<string, string>>) {
      const answer = await get(`${api.url}/mcp`, headers);
      expect(answer.status).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe(`Bearer resource_metadata="${metadata}", scope="tools:call"`);
    }
  });

  it("answers 401 invalid_token for another resource's token, naming nothing of the token", async () => {
    const jwt = await token({ aud: RESOURCE_B });
    const answer = await get(`${api.url}/mcp`, { authorization: `Bearer ${jwt}` });
    expect(answer.status).toBe(401);
    const challenge = answer.headers["www-authenticate"] as string;
    expect(challenge).toMatch(/^Bearer resource_metadata="[^"]+", scope="tools:call", error="invalid_token", error_description="[^"]+"$/);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "invalid_token" });
    expect(answer.body + challenge).not.toContain(jwt.split(".")[1]!);
  });

  it("answers 403 insufficient_scope with the scope needed", async () => {
    const answer = await get(`${api.url}/mcp`, { authorization: `Bearer ${await token({ scope: "tools:read" })}` });
    expect(answer.status).toBe(403);
    expect(answer.headers["www-authenticate"]).toContain('scope="tools:call", error="insufficient_scope"');
  });

  it("answers 400 invalid_request for a malformed Authorization header", async () => {
    for (const authorization of ["Bearer", "Bearer a b", "Bearer ä"]) {
      const answer = await get(`${api.url}/mcp`, { authorization: Buffer.from(authorization).toString("latin1") });
      expect(answer.status, authorization).toBe(400);
      expect(answer.headers["www-authenticate"]).toContain('error="invalid_request"');
    }
  });

  it("answers 503, not 401, when the issuer's keys cannot be read", async () => {
    const unreachable = requireBearerAuth({ verifier: createVerifier({ issuer: "http://127.0.0.1:1/acme", resource: RESOURCE_A }) });
    const down = await serve((req, res) => unreachable(req, res, () => res.writeHead(200).end()));
    try {
      const answer = await get(`${down.url}/mcp`, { authorization: `Bearer ${await token()}` });
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("5");
      expect(answer.headers["www-authenticate"]).toBeUndefined();
    } finally {
      await down.close();
    }
  });

  it("serves RFC 9728 metadata at the path-inserted address, readable from any origin", async () => {
    const answer = await get(`${api.url}${protectedResourceMetadataPath(RESOURCE_A)}`);
    expect(answer.status).toBe(200);
    expect(answer.headers["access-control-allow-origin"]).toBe("*");
    expect(JSON.parse(answer.body)).toEqual({
      resource: RESOURCE_A,
      authorization_servers: [issuer],
      scopes_supported: ["tools:read", "tools:call"],
      bearer_methods_supported: ["header"],
      resource_name: "Example MCP",
    });
  });
});

describe("protectedResourceMetadataPath", () => {
  it("inserts the well-known suffix before the resource's path (RFC 9728 §3.1)", () => {
    expect(protectedResourceMetadataPath("http://localhost:3961/mcp")).toBe("/.well-known/oauth-protected-resource/mcp");
    expect(protectedResourceMetadataPath("https://api.example.com/")).toBe("/.well-known/oauth-protected-resource");
    expect(protectedResourceMetadataPath("https://api.example.com")).toBe("/.well-known/oauth-protected-resource");
    expect(protectedResourceMetadataPath("https://api.example.com/v1/mcp?tenant=a")).toBe("/.well-known/oauth-protected-resource/v1/mcp?tenant=a");
    expect(protectedResourceMetadataUrl("http://localhost:3961/mcp")).toBe("http://localhost:3961/.well-known/oauth-protected-resource/mcp");
  });
});
