import { createPublicKey, type JsonWebKey } from "node:crypto";
import jwt from "jsonwebtoken";
import type { PrismaClient } from "~/generated/prisma/client";
import type { adminApi } from "../support/admin-api";
import { createClient } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";

/**
 * A small Shared Signals receiver's side of the tests: it gets a client_credentials token for the
 * transmitter, calls the stream management endpoints, and verifies every Security Event Token
 * with jsonwebtoken (not the jose library Porta signs with) against the keys the organization's
 * jwks_uri publishes, turned into PEM by node:crypto.
 */
export const CAEP = "https://schemas.openid.net/secevent/caep/event-type/";
export const RISC = "https://schemas.openid.net/secevent/risc/event-type/";
export const VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification";
export const PUSH = "urn:ietf:rfc:8935";
export const POLL = "urn:ietf:rfc:8936";

export interface Set {
  iss: string;
  aud: string;
  iat: number;
  jti: string;
  txn?: string;
  sub_id: Record<string, string>;
  events: Record<string, Record<string, unknown>>;
}

export interface Receiver {
  clientId: string;
  token: string;
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
}

/** A client of the organization granted the transmitter's resource, and its token. */
export async function receiverClient(
  prisma: PrismaClient,
  api: ReturnType<typeof adminApi>,
  issuer: string,
  organizationId: string,
  resourceId: string,
  scopes = ["ssf.manage"],
): Promise<Receiver> {
  const { client, secret } = await createClient(prisma, organizationId, { grantTypes: ["client_credentials"], scope: "openid" });
  const granted = await api.put(`/clients/${client.id}/api-resources/${resourceId}`, { scopes });
  if (granted.status !== 200) throw new Error(`grant failed: ${JSON.stringify(granted.body)}`);
  const answer = await postForm(`${issuer}/auth/token`, { grant_type: "client_credentials", resource: `${issuer}/ssf`, scope: scopes.join(" ") }, { authorization: basicAuth(client.id, secret!.value) });
  if (answer.status !== 200) throw new Error(`token failed: ${JSON.stringify(answer.body)}`);
  return receiverWith(client.id, String(answer.body.access_token), issuer);
}

export function receiverWith(clientId: string, token: string, issuer: string): Receiver {
  return {
    clientId,
    token,
    async call(method, path, body) {
      const res = await fetch(`${issuer}/ssf${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as never };
    },
  };
}

/** Verifies a SET as an independent receiver would: ES256 against the issuer's published keys, typ, iss and aud. */
export async function verifySet(issuer: string, token: string, audience: string): Promise<Set> {
  const jwks = (await (await fetch(`${issuer}/.well-known/jwks`)).json()) as { keys: Array<JsonWebKey & { kid: string }> };
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload === "string") throw new Error("not a JWT");
  if (decoded.header.typ !== "secevent+jwt") throw new Error(`typ is ${decoded.header.typ}`);
  const jwk = jwks.keys.find((k) => k.kid === decoded.header.kid);
  if (!jwk) throw new Error(`no published key ${decoded.header.kid}`);
  const pem = createPublicKey({ key: jwk, format: "jwk" }).export({ type: "spki", format: "pem" });
  return jwt.verify(token, pem, { algorithms: ["ES256"], issuer, audience }) as unknown as Set;
}
