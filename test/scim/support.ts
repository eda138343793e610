import { expect } from "vitest";
import type { adminApi } from "../support/admin-api";
import type { TestPorta } from "../support/porta";

/** What the SCIM tests share: requests as a provisioning client sends them, and a token issued through the Admin API. */
export interface ScimAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { Resources?: Array<Record<string, unknown>> };
}

export const SCIM_JSON = "application/scim+json";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export const endpointOf = (porta: TestPorta, slug: string) => `${porta.baseUrl}/${slug}/scim/v2`;

export interface ScimClient {
  endpoint: string;
  token: string;
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ScimAnswer>;
}

export async function sendScim(url: string, method: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<ScimAnswer> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": SCIM_JSON } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: ScimAnswer["body"] = {};
  if (text) {
    try {
      parsed = JSON.parse(text) as ScimAnswer["body"];
    } catch {
      parsed = { text };
    }
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export function scimClient(porta: TestPorta, slug: string, token: string): ScimClient {
  const endpoint = endpointOf(porta, slug);
  return { endpoint, token, send: (method, path, body, headers) => sendScim(`${endpoint}${path}`, method, token, body, headers) };
}

export async function issueScimToken(api: ReturnType<typeof adminApi>, orgId: string, body: Record<string, unknown> = { name: "Provisioning" }) {
  const res = await api.post<{ id: string; token: string; prefix: string; status: string; expiresAt: string }>(`/organizations/${orgId}/scim-tokens`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Asserts a SCIM error body with the status (and scimType, when given). */
export function expectScimError(answer: ScimAnswer, status: number, scimType?: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.headers.get("content-type")).toContain(SCIM_JSON);
  expect(answer.body.schemas).toEqual([ERROR_SCHEMA]);
  expect(answer.body.status).toBe(String(status));
  expect(typeof answer.body.detail).toBe("string");
  if (scimType !== undefined) expect(answer.body.scimType).toBe(scimType);
}

export const patch = (...operations: Array<Record<string, unknown>>) => ({ schemas: [PATCH_OP], Operations: operations });
