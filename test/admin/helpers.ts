import { randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import { expect } from "vitest";
import { csrfOf, startAuthorization } from "../support/browser";
import type { ApiResponse } from "../support/admin-api";
import { createClient } from "../support/factories";
import type { TestPorta } from "../support/porta";

/**
 * Shared steps of the Admin API tests: organizations with a client whose users can sign in
 * through the real login pages, the 422 body check, and a fingerprint of the data an invalid
 * request must leave untouched.
 */
export const PASSWORD = "a long test password 1";
export const RP_CALLBACK = "https://rp.example.com/cb";
export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

export interface ErrorBody {
  error: { code: string; message: string; details?: Array<{ field: string; message: string }> };
}

export interface Tenant {
  org: { id: string; slug: string };
  clientId: string;
  secret: string;
  issuer: string;
}

/** An organization (written through Prisma) with one confidential client. */
export async function createTenant(porta: TestPorta, slug = unique("org")): Promise<Tenant> {
  const prisma = porta.services.db.prisma;
  const org = await prisma.organization.create({ data: { slug, name: `Organization ${slug}` } });
  return tenantOf(porta, org);
}

/** A confidential client for an existing organization. */
export async function tenantOf(porta: TestPorta, org: { id: string; slug: string }): Promise<Tenant> {
  const { client, secret } = await createClient(porta.services.db.prisma, org.id, { redirectUris: [RP_CALLBACK] });
  return { org: { id: org.id, slug: org.slug }, clientId: client.id, secret: secret!.value, issuer: `${porta.baseUrl}/${org.slug}` };
}

/**
 * Signs a user in at the tenant through its real login and consent pages; returns the tokens.
 * `extra` adds authorization parameters: `{ prompt: "consent" }` makes offline_access yield a refresh token.
 */
export async function signIn(tenant: Tenant, credentials: { email: string; password: string }, scope = "openid profile email offline_access", extra: Record<string, string> = {}) {
  const start = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK, scope, extra });
  const page = await start.browser.get(start.interactionUrl);
  const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(await page.text()), email: credentials.email, password: credentials.password });
  if (posted.status !== 302 && posted.status !== 303) throw new Error(`login failed with ${posted.status}`);
  let step = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith(RP_CALLBACK));
  if (!step.url.startsWith(RP_CALLBACK) && step.res.status === 200) {
    // The consent page: allow.
    const allow = await start.browser.post(`${step.url}/consent`, { csrf: csrfOf(await step.res.text()), decision: "allow" });
    step = await start.browser.follow(allow, `${step.url}/consent`, (u) => u.startsWith(RP_CALLBACK));
  }
  const { url } = step;
  if (!url.startsWith(RP_CALLBACK)) throw new Error(`login did not reach the callback: ${url}`);
  const tokens = await oidc.authorizationCodeGrant(start.config, new URL(url), { pkceCodeVerifier: start.verifier });
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token, config: start.config, browser: start.browser };
}

/** Status of the tenant's userinfo endpoint for an access token: 200 while the token lives. */
export async function userinfoStatus(tenant: Tenant, accessToken: string): Promise<number> {
  const res = await fetch(`${tenant.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Asserts a 422 with the error body naming `field` among its details. */
export function expect422(res: ApiResponse, field: string, label = "") {
  const body = res.body as ErrorBody | undefined;
  expect(res.status, `${label} → ${JSON.stringify(body)}`).toBe(422);
  expect(body?.error.code, label).toBe("validation_failed");
  const fields = (body?.error.details ?? []).map((d) => d.field);
  expect(fields, `${label}: details ${JSON.stringify(body?.error.details)}`).toContain(field);
  for (const detail of body?.error.details ?? []) expect(typeof detail.message).toBe("string");
}

/** Asserts the error body shape with a status and code. */
export function expectError(res: ApiResponse, status: number, code?: string, label = "") {
  const body = res.body as ErrorBody | undefined;
  expect(res.status, `${label} → ${JSON.stringify(body)}`).toBe(status);
  expect(typeof body?.error.message, label).toBe("string");
  if (code) expect(body?.error.code, label).toBe(code);
}

/**
 * A fingerprint of the data the Admin API writes: row counts and version sums of every table
 * it touches, and the newest audit entry. Equal before and after means nothing was written.
 */
export async function dataFingerprint(porta: TestPorta) {
  const prisma = porta.services.db.prisma;
  const [users, userVersions, roles, roleVersions, permissions, rolePermissions, userRoles, invitations, orgs, orgVersions, audit, lastAudit, payloads] = await Promise.all([
    prisma.user.count(),
    prisma.user.aggregate({ _sum: { version: true } }),
    prisma.role.count(),
    prisma.role.aggregate({ _sum: { version: true } }),
    prisma.permission.count(),
    prisma.rolePermission.count(),
    prisma.userRole.count(),
    prisma.invitation.count(),
    prisma.organization.count(),
    prisma.organization.aggregate({ _sum: { version: true } }),
    prisma.auditEntry.count(),
    prisma.auditEntry.findFirst({ orderBy: { id: "desc" }, select: { id: true } }),
    prisma.oidcPayload.count(),
  ]);
  return {
    users,
    userVersions: userVersions._sum.version,
    roles,
    roleVersions: roleVersions._sum.version,
    permissions,
    rolePermissions,
    userRoles,
    invitations,
    orgs,
    orgVersions: orgVersions._sum.version,
    audit,
    lastAudit: lastAudit?.id ?? null,
    payloads,
  };
}

export interface BadRequest {
  label: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  /** The field the 422 details must name. */
  field: string;
}

/** A string longer than any field allows. */
export const OVERSIZE = "x".repeat(5000);
export const BAD_CURSOR = "not-a-cursor";
/** Well-formed base64url JSON, but not an id Porta wrote. */
export const FORGED_CURSOR = Buffer.from(JSON.stringify([null, "'; drop table"]), "utf8").toString("base64url");
