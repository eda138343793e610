import { request } from "node:http";
import * as oidc from "openid-client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_EXCHANGE_GRANT } from "~/schemas/client";
import { createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, clientConfiguration, codeFlow, issuerOf, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * Grants, introspection and revocation are answered before Express (http/protocol-first.ts):
 * the same answers and headers as the Express path, BASE_URL's issuer whatever Host says, one
 * access line, the client's address as TRUST_PROXY decides, and bad input refused as before. A
 * query string sends a request down the Express path, which is how these tests ask it; the
 * Content-Security-Policy tells the two apart (Express adds the page nonce).
 */
let porta: TestPorta;
let org: OrgRef;
let client: { id: string; secret: string };

beforeAll(async () => {
  porta = await startTestPorta();
  org = await createOrganization(porta.services.db.prisma);
  client = await machineClient(porta, org);
});
afterAll(async () => {
  await porta?.stop();
});

async function machineClient(server: TestPorta, at: OrgRef, input: Parameters<typeof createClient>[2] = {}) {
  const { client: created, secret } = await createClient(server.services.db.prisma, at.id, { grantTypes: ["client_credentials"], ...input });
  return { id: created.id, secret: secret!.value };
}

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http, so that Host and the forwarding headers go out exactly as written. */
function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const form = (values: Record<string, string>) => new URLSearchParams(values).toString();
const auth = () => ({ authorization: basicAuth(client.id, client.secret) });
const grant = (path: string, headers: Record<string, string> = {}) => post(`${issuerOf(porta, org)}${path}`, form({ grant_type: "client_credentials" }), { ...auth(), ...headers });
const json = (answer: Raw) => JSON.parse(answer.text) as Record<string, unknown>;

const SAME_HEADERS = [
  "content-type",
  "cache-control",
  "pragma",
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "cross-origin-resource-policy",
  "cross-origin-opener-policy",
  "strict-transport-security",
  "x-dns-prefetch-control",
];

function expectSameAnswerShape(fast: Raw, viaExpress: Raw, what: string) {
  expect(fast.status, what).toBe(viaExpress.status);
  for (const name of SAME_HEADERS) expect(fast.headers[name], `${what} ${name}`).toBe(viaExpress.headers[name]);
  expect(fast.headers["x-request-id"], what).toMatch(/^[0-9a-f-]{36}$/);
  const csp = fast.headers["content-security-policy"] as string;
  expect(csp, what).toContain("script-src 'self'");
  expect(csp, what).not.toContain("nonce-");
  expect(viaExpress.headers["content-security-policy"], what).toContain("nonce-");
  expect(csp.replace(/;script-src [^;]*/, ""), what).toBe((viaExpress.headers["content-security-policy"] as string).replace(/;script-src [^;]*/, ""));
}

describe("grants, introspection and revocation before Express", () => {
  it("answer as the Express path does, with Helmet's headers and without the page nonce", async () => {
    for (const path of ["/token", "/auth/token"]) {
      const fast = await grant(path);
      const viaExpress = await grant(`${path}?via=express`);
      expectSameAnswerShape(fast, viaExpress, path);
      expect(Object.keys(json(fast)).sort(), path).toEqual(Object.keys(json(viaExpress)).sort());
      expect(json(fast).token_type).toBe("Bearer");
    }
    const token = json(await grant("/auth/token")).access_token as string;
    const introspect = (suffix = "") => post(`${issuerOf(porta, org)}/token/introspection${suffix}`, form({ token }), auth());
    const [fast, viaExpress] = [await introspect(), await introspect("?via=express")];
    expectSameAnswerShape(fast, viaExpress, "introspection");
    expect(json(fast)).toEqual(json(viaExpress));
    expect(json(fast)).toMatchObject({ active: true, client_id: client.id, iss: issuerOf(porta, org) });

    const revoked = await post(`${issuerOf(porta, org)}/token/revocation`, form({ token }), auth());
    expect(revoked.status).toBe(200);
    expect(revoked.text).toBe("");
    expect(json(await introspect())).toEqual({ active: false });
  });

  it("issues and introspects under BASE_URL's issuer whatever Host and X-Forwarded-* say", async () => {
    const forged = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", forwarded: "host=evil.example;proto=https" };
    const answer = await grant("/auth/token", forged);
    expect(answer.status).toBe(200);
    const token = json(answer).access_token as string;
    expect(decodeJwt(token).iss).toBe(issuerOf(porta, org));
    const introspected = await post(`${issuerOf(porta, org)}/token/introspection`, form({ token }), { ...auth(), ...forged });
    expect(json(introspected)).toMatchObject({ active: true, iss: issuerOf(porta, org) });
  });

  it("writes one access line with the request id and the canonical path, and nothing secret", async () => {
    const answer = await post(`${porta.baseUrl}/${org.slug.toUpperCase()}/token`, form({ grant_type: "client_credentials" }), {
      ...auth(),
      "x-request-id": "fast-lane-request-1",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["x-request-id"]).toBe("fast-lane-request-1");
    const lines = porta.logs.lines.filter((line) => line.requestId === "fast-lane-request-1");
    const access = lines.filter((line) => line.msg === "request");
    expect(access).toEqual([expect.objectContaining({ method: "POST", path: `/${org.slug}/auth/token`, status: 200 })]);
    const logged = JSON.stringify(porta.logs.lines);
    expect(logged).not.toContain(client.secret);
    expect(logged).not.toContain(json(answer).access_token as string);
  });

  it("refuses bad input as the Express path does: unknown organization, huge body, unstorable text, no form", async () => {
    const unknown = await post(`${porta.baseUrl}/no-such-org-${Date.now()}/token`, form({ grant_type: "client_credentials" }), auth());
    expect(unknown.status).toBe(404);
    expect(json(unknown)).toEqual({ error: "not_found", error_description: "There is no such organization." });

    const huge = await post(`${issuerOf(porta, org)}/auth/token`, form({ grant_type: "client_credentials", pad: "x".repeat(60_000) }), auth());
    expect(huge.status).toBe(413);
    expect(json(huge)).toEqual({ error: "invalid_request", error_description: "The request body is too large." });

    // A form cannot carry a lone surrogate (percent-decoding yields U+FFFD); NUL it can.
    const nul = await post(`${issuerOf(porta, org)}/token/introspection`, form({ token: "a\u0000b" }), auth());
    expect(nul.status).toBe(400);
    expect(json(nul)).toEqual({ error: "invalid_request", error_description: expect.stringContaining("The parameter token") as string });
    // Broken percent-encoding and a body that is not a form: a 400 from the provider, as via Express.
    for (const [body, type] of [
      ["grant_type=%E0%A4%A", "application/x-www-form-urlencoded"],
      [JSON.stringify({ grant_type: "client_credentials" }), "application/json"],
    ] as const) {
      const [fast, viaExpress] = await Promise.all(["", "?via=express"].map((suffix) => post(`${issuerOf(porta, org)}/auth/token${suffix}`, body, { ...auth(), "content-type": type })));
      expect(fast!.status, type).toBe(400);
      expect(json(fast!), type).toEqual(json(viaExpress!));
    }
    expect(porta.logs.lines.filter((line) => line.msg === "unhandled error")).toEqual([]);
  });

  it("hands the provider the client's address as TRUST_PROXY decides", async () => {
    const exchangedFrom = async (server: TestPorta, headers: Record<string, string>) => {
      const prisma = server.services.db.prisma;
      const at = await createOrganization(prisma);
      const person = await createUser(prisma, at.id);
      const { client: rp, secret } = await createClient(prisma, at.id);
      const subjectToken = (
        await codeFlow(server, at, await clientConfiguration(server, at, rp, { secret: secret!.value }), {
          accountId: person.id,
          scope: "openid email",
          redirectUri: "https://rp.example.com/cb",
        })
      ).access_token;
      const gateway = await machineClient(server, at, { tokenExchangeAudiences: ["https://api.example.com"] });
      const answer = await post(
        `${issuerOf(server, at)}/auth/token`,
        form({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: subjectToken, subject_token_type: "urn:ietf:params:oauth:token-type:access_token", audience: "https://api.example.com" }),
        { authorization: basicAuth(gateway.id, gateway.secret), ...headers },
      );
      expect(answer.status, answer.text).toBe(200);
      const entry = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "token.exchanged", organizationId: at.id } });
      return entry.ip;
    };
    // By default a proxy on the loopback interface is trusted.
    expect(await exchangedFrom(porta, { "x-forwarded-for": "203.0.113.9" })).toBe("203.0.113.9");
    const strict = await startTestPorta({ env: { TRUST_PROXY: "10.0.0.0/8" } });
    try {
      expect(await exchangedFrom(strict, { "x-forwarded-for": "203.0.113.9" })).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    } finally {
      await strict.stop();
    }
  });
});

// openid-client, a certified relying party, through the lane: discovery, grant, introspection.
describe("a certified relying party", () => {
  it("gets and introspects a client_credentials token", async () => {
    const config = await clientConfiguration(porta, org, { id: client.id }, { secret: client.secret });
    const tokens = await oidc.clientCredentialsGrant(config);
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: client.id });
  });
});
