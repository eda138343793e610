import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's user import page (decision 087): upload an export with its format, read the
 * report, apply exactly that file; a Keycloak client's new secret is shown once; a file of
 * another shape is refused next to the field and nothing is written.
 */
let porta: TestPorta;
let admin: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");

function upload(url: string, csrf: string, format: string, file: string) {
  const form = new FormData();
  form.set("csrf", csrf);
  form.set("intent", "preview");
  form.set("format", format);
  form.set("file", new Blob([file], { type: "application/octet-stream" }), "export");
  return fetch(url, { method: "POST", body: form, redirect: "manual", headers: { cookie: admin.browser.cookieHeader(url) } });
}

describe("console user import page", () => {
  it("previews a Keycloak export without writing, applies it, and shows a new client secret once", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/user-imports`;
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/user-imports"`);
    const first = await pageWithCsrf(admin.browser, url);
    expect(first.res.status).toBe(200);

    const realm = {
      realm: "acme",
      users: [{ username: "ann", email: "ann@example.com", emailVerified: true, realmRoles: ["staff"] }, { username: "svc" }],
      clients: [{ clientId: "web", name: "Web", publicClient: false, standardFlowEnabled: true, redirectUris: ["https://web.example.com/cb"] }],
    };
    const previewed = await upload(url, first.csrf, "keycloak", JSON.stringify(realm));
    expect(previewed.status).toBe(200);
    const previewHtml = await previewed.text();
    expect(textOf(previewHtml)).toContain("1 to create, 0 to update, 0 unchanged, 1 skipped.");
    expect(textOf(previewHtml)).toContain("no email address");
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(0);

    const token = /name="token" value="([^"]+)"/.exec(previewHtml)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(previewHtml)?.[1];
    const applied = await admin.browser.post(url, { csrf: csrf!, intent: "apply", token: token! });
    expect(applied.status).toBe(200);
    const appliedHtml = await applied.text();
    expect(textOf(appliedHtml)).toContain("The import was applied");
    const secret = /data-testid="imported-client-secret">([^<]+)</.exec(appliedHtml)?.[1];
    expect(secret).toBeTruthy();
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(1);
    expect(await prisma.client.count({ where: { organizationId: org.id, name: "Web" } })).toBe(1);

    // The same preview cannot be applied twice, and a later visit shows no secret.
    const again = await admin.browser.post(url, { csrf: csrf!, intent: "apply", token: token! });
    expect(again.status).toBe(409);
    expect(textOf(await again.text())).toContain("The preview expired. Upload the file again.");
    expect((await pageWithCsrf(admin.browser, url)).html).not.toContain(secret!);
  });

  it("refuses a file of another shape next to the field and writes nothing", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/user-imports`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const refused = await upload(url, csrf, "csv", `email,password\nann@example.com,${await bcrypt.hash("x", 4)}`);
    expect(refused.status).toBe(422);
    const html = await refused.text();
    expect(html).toMatch(/id="file-error"[^>]*>[^<]*data: has columns Porta does not know: password/);
    const unknownFormat = await upload(url, csrf, "okta", "[]");
    expect(unknownFormat.status).toBe(422);
    expect(textOf(await unknownFormat.text())).toContain("Choose the format and an export file.");
    expect(await prisma.user.count({ where: { organizationId: org.id } })).toBe(0);
  });
});
