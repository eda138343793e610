import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's API resource pages (decision 077) as a browser drives them: an administrator adds
 * a resource, edits it (a stale page never overwrites), grants a client some of its scopes on the
 * client's page, which the client's tokens then carry, revokes the grant, and deletes the
 * resource behind a confirmation; bad input writes nothing and is named beside its field.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let org: Awaited<ReturnType<typeof createOrganization>>;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const listUrl = () => `${porta.baseUrl}/console/organizations/${org.id}/api-resources`;
const versionOf = (html: string) => /name="version" value="(\d+)"/.exec(html)![1]!;
/** Visible text, roughly: tags dropped and entities that the tests meet decoded. */
const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");
const ORDERS = "https://api.example.com/orders";

describe("console API resource pages", () => {
  it("are linked from the organization, list nothing at first, and refuse bad input next to the field, writing nothing", async () => {
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/api-resources"`);
    const first = await pageWithCsrf(admin.browser, listUrl());
    expect(first.res.status).toBe(200);
    expect(textOf(first.html)).toContain("No API resources yet.");
    // Every field of the form has its label.
    for (const name of ["identifier", "name", "scopes", "accessTokenTtlSeconds", "status"]) expect(first.html).toContain(`<label for="${name}">`);
    expect(first.html).toMatch(/<label class="check"><input type="checkbox" name="consentRequired"/);

    for (const [identifier, field, message] of [
      ["/orders", "identifier", "must be an absolute URI"],
      ["https://api.example.com/orders#v1", "identifier", "must not contain a fragment"],
      ["ftp://api.example.com", "identifier", "must be an http or https URI"],
    ] as const) {
      const res = await admin.browser.post(listUrl(), { csrf: first.csrf, intent: "create", identifier, name: "Orders", scopes: "orders:read", accessTokenTtlSeconds: "", status: "active" });
      expect(res.status, identifier).toBe(422);
      const html = await res.text();
      expect(html).toContain(`id="${field}-error"`);
      expect(textOf(html)).toContain(message);
      // What was typed is shown again.
      expect(html).toContain(`value="${identifier}"`);
    }
    const repeated = await admin.browser.post(listUrl(), { csrf: first.csrf, intent: "create", identifier: ORDERS, name: "Orders", scopes: "a a", status: "active" });
    expect(repeated.status).toBe(422);
    expect(await repeated.text()).toContain('id="scopes-error"');
    // Without the CSRF token nothing happens either.
    expect((await admin.browser.post(listUrl(), { intent: "create", identifier: ORDERS, name: "Orders", status: "active" })).status).toBe(403);
    expect(await prisma().apiResource.count({ where: { organizationId: org.id } })).toBe(0);
  });

  it("adds and edits a resource, and a page older than the saved resource does not overwrite it", async () => {
    const page = await pageWithCsrf(admin.browser, listUrl());
    const created = await admin.browser.post(listUrl(), {
      csrf: page.csrf,
      intent: "create",
      identifier: ORDERS,
      name: "Orders",
      scopes: "orders:read orders:write",
      accessTokenTtlSeconds: "600",
      consentRequired: "on",
      status: "active",
    });
    expect(created.status).toBe(302);
    const row = await prisma().apiResource.findFirstOrThrow({ where: { organizationId: org.id } });
    expect(row).toMatchObject({ identifier: ORDERS, name: "Orders", scopes: ["orders:read", "orders:write"], accessTokenTtlSeconds: 600, consentRequired: true, status: "active" });
    expect(created.headers.get("location")).toBe(`/console/organizations/${org.id}/api-resources/${row.id}?done=created`);
    expect(textOf(await (await admin.browser.get(listUrl())).text())).toContain(`Orders ${ORDERS} orders:read orders:write Active`);

    const url = `${listUrl()}/${row.id}`;
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${created.headers.get("location")!}`)).text())).toContain("API resource added.");
    const edit = await pageWithCsrf(admin.browser, url);
    const version = versionOf(edit.html);
    // No consentRequired field: the box was unticked.
    const saved = await admin.browser.post(url, { csrf: edit.csrf, intent: "update", version, identifier: ORDERS, name: "Order desk", scopes: "orders:read orders:write orders:admin", accessTokenTtlSeconds: "", status: "active" });
    expect(saved.status).toBe(302);
    expect(await prisma().apiResource.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ name: "Order desk", scopes: ["orders:read", "orders:write", "orders:admin"], accessTokenTtlSeconds: null, consentRequired: false });

    // Each saved scope has its description field; an emptied one describes nothing.
    const describing = await pageWithCsrf(admin.browser, url);
    for (const scope of ["orders:read", "orders:write", "orders:admin"]) expect(describing.html).toContain(`<label for="description:${scope}">Description of ${scope}</label>`);
    const described = await admin.browser.post(url, {
      csrf: describing.csrf,
      intent: "update",
      version: versionOf(describing.html),
      identifier: ORDERS,
      name: "Order desk",
      scopes: "orders:read orders:write orders:admin",
      accessTokenTtlSeconds: "",
      status: "active",
      describesScopes: "on",
      "description:orders:read": "Read your orders",
      "description:orders:write": "",
      "description:orders:admin": "Everything",
    });
    expect(described.status).toBe(302);
    expect((await prisma().apiResource.findUniqueOrThrow({ where: { id: row.id } })).scopeDescriptions).toEqual({ "orders:read": "Read your orders", "orders:admin": "Everything" });

    const stale = await admin.browser.post(url, { csrf: edit.csrf, intent: "update", version, identifier: ORDERS, name: "Stale", scopes: "orders:read", status: "active" });
    expect(stale.status).toBe(409);
    expect(textOf(await stale.text())).toContain("Someone else saved this API resource");
    expect((await prisma().apiResource.findUniqueOrThrow({ where: { id: row.id } })).name).toBe("Order desk");
  });

  it("grants a client scopes on its page, which its tokens carry, then revokes the grant", async () => {
    const resource = await prisma().apiResource.findFirstOrThrow({ where: { organizationId: org.id, identifier: ORDERS } });
    const { client, secret } = await createClient(prisma(), org.id, { grantTypes: ["client_credentials"], scope: "openid", redirectUris: [] });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`;
    const page = await pageWithCsrf(admin.browser, url);
    expect(textOf(page.html)).toContain("Order desk");
    expect(textOf(page.html)).toContain("Not granted.");
    expect(textOf(page.html)).toContain("orders:read (Read your orders)");
    const granted = await admin.browser.post(url, { csrf: page.csrf, intent: "grantResource", resourceId: resource.id, scopes: ["orders:read", "orders:admin"] });
    expect(granted.status).toBe(302);
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${granted.headers.get("location")!}`)).text())).toContain("Granted: orders:read orders:admin");

    const token = await postForm(`${porta.baseUrl}/${org.slug}/auth/token`, { grant_type: "client_credentials", resource: ORDERS, scope: "orders:read orders:write orders:admin" }, { authorization: basicAuth(client.id, secret!.value) });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(String(decodeJwt(String(token.body.access_token)).scope).split(" ").sort()).toEqual(["orders:admin", "orders:read"]);

    // A scope the resource does not define is refused, and the grant stays as it was.
    const bad = await admin.browser.post(url, { csrf: page.csrf, intent: "grantResource", resourceId: resource.id, scopes: "billing:read" });
    expect(bad.status).toBe(422);
    expect((await prisma().clientResourceGrant.findUniqueOrThrow({ where: { clientId_resourceId: { clientId: client.id, resourceId: resource.id } } })).scopes).toEqual(["orders:read", "orders:admin"]);

    const revoked = await admin.browser.post(url, { csrf: page.csrf, intent: "revokeResource", resourceId: resource.id });
    expect(revoked.status).toBe(302);
    expect(await prisma().clientResourceGrant.count({ where: { clientId: client.id } })).toBe(0);
    const refused = await postForm(`${porta.baseUrl}/${org.slug}/auth/token`, { grant_type: "client_credentials", resource: ORDERS }, { authorization: basicAuth(client.id, secret!.value) });
    expect(refused.body.error).toBe("invalid_target");
  });

  it("deletes a resource of this organization only", async () => {
    const resource = await prisma().apiResource.findFirstOrThrow({ where: { organizationId: org.id, identifier: ORDERS } });
    const other = await createOrganization(prisma());
    const page = await pageWithCsrf(admin.browser, listUrl());
    expect(textOf(page.html)).toContain(`Delete Order desk (${ORDERS})?`);
    // Posted to another organization's page, the id is not found there.
    const elsewhere = await admin.browser.post(`${porta.baseUrl}/console/organizations/${other.id}/api-resources`, { csrf: page.csrf, intent: "delete", resourceId: resource.id });
    expect(elsewhere.status).toBe(404);
    expect(await prisma().apiResource.count({ where: { id: resource.id } })).toBe(1);
    const deleted = await admin.browser.post(listUrl(), { csrf: page.csrf, intent: "delete", resourceId: resource.id });
    expect(deleted.status).toBe(302);
    expect(await prisma().apiResource.count({ where: { id: resource.id } })).toBe(0);
    expect(textOf(await (await admin.browser.get(`${porta.baseUrl}${deleted.headers.get("location")!}`)).text())).toContain("API resource deleted.");
  });
});
