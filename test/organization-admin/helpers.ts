import { randomBytes } from "node:crypto";
import type { ApiResponse } from "../support/admin-api";
import { createClient } from "../support/factories";
import type { TestPorta } from "../support/porta";
import { freshTotpCode, openLoginPage, redeem, RP_CALLBACK, signInWithPassword, submitCode, toCallback, type Tenant, type TestUser } from "../two-factor/helpers";

/**
 * An organization's own administration in tests (decision 090): organizations made through the
 * Admin API (so they have their roles), a client of theirs marked for administration, tokens of
 * their administrators obtained through the real login pages (with their second factor), and
 * calls to their door `/{slug}/api/admin`.
 */
export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

type ServiceAdminApi = { post<T = unknown>(path: string, body?: unknown): Promise<ApiResponse<T>> };

/** An organization made through the Admin API, with a confidential client that may get administration tokens. */
export async function createAdministeredTenant(porta: TestPorta, api: ServiceAdminApi): Promise<Tenant> {
  const slug = unique("oa");
  const created = await api.post<{ id: string; slug: string; name: string }>("/organizations", { name: `Organization ${slug}`, slug });
  if (created.status !== 201) throw new Error(`creating the organization answered ${created.status}: ${JSON.stringify(created.body)}`);
  const prisma = porta.services.db.prisma;
  const { client, secret } = await createClient(prisma, created.body.id, { redirectUris: [RP_CALLBACK], scope: "openid profile email roles offline_access" });
  await prisma.client.update({ where: { id: client.id }, data: { adminApiAccess: true } });
  return { org: { id: created.body.id, slug: created.body.slug, name: created.body.name }, client, secret: secret!.value, issuer: `${porta.baseUrl}/${created.body.slug}` };
}

/** An access token of the tenant's administration client, signed in with password and (when enrolled) TOTP. */
export async function administrationToken(porta: TestPorta, tenant: Tenant, user: TestUser): Promise<string> {
  const page = await openLoginPage(tenant, undefined, { scope: "openid profile email roles" });
  let step = await signInWithPassword(page, user.email);
  if (step.kind === "totp") {
    const verified = await submitCode(page.browser, step, await freshTotpCode(porta, user.id, user.totpSecret!));
    if (!verified.step) throw new Error(`the code was refused: ${verified.res.status}`);
    step = verified.step;
  }
  return (await redeem(page, await toCallback(page.browser, step))).access_token;
}

/** Calls an organization's door with a bearer token; bodies are JSON both ways unless `raw` is given. */
export function organizationApi(porta: TestPorta, slug: string, token: string | undefined) {
  async function call<T = unknown>(method: string, path: string, body?: unknown, raw?: { contentType: string; bytes: Uint8Array<ArrayBuffer> }): Promise<ApiResponse<T>> {
    const res = await fetch(`${porta.url}/${slug}/api/admin${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(raw ? { "content-type": raw.contentType } : body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: raw ? raw.bytes : body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
  }
  return {
    call,
    get: <T = unknown>(path: string) => call<T>("GET", path),
    post: <T = unknown>(path: string, body?: unknown) => call<T>("POST", path, body),
    put: <T = unknown>(path: string, body?: unknown) => call<T>("PUT", path, body),
    delete: <T = unknown>(path: string) => call<T>("DELETE", path),
  };
}
