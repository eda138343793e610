import { once } from "node:events";
import http from "node:http";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, mainOf, openLoginPage, type Tenant } from "../login/helpers";
import { dataFingerprint, expect422, expectError, OVERSIZE, type BadRequest } from "./helpers";
import { withoutPermission } from "./resources";

/**
 * Branding through the Admin API against a real server with a real admin token: settings,
 * uploads (type checks, SVG sanitizing, size limits enforced while streaming), the public asset
 * URLs, and the organization's login page showing the change at once.
 */
interface AssetView {
  assetId: string;
  url: string;
  contentType: string;
}
interface Settings {
  organizationId: string;
  displayName: string | null;
  primaryColor: string | null;
  backgroundColor: string | null;
  textColor: string | null;
  footerText: string | null;
  logo: AssetView | null;
  favicon: AssetView | null;
}
interface Asset {
  id: string;
  organizationId: string;
  kind: string;
  contentType: string;
  sha256: string;
  size: number;
  url: string;
}

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
/** An icon directory with one 1×1 entry whose image is the PNG above. */
const ICO = Buffer.concat([
  Buffer.from([0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 32, 0]),
  Buffer.from(new Uint32Array([PNG.length, 22]).buffer),
  PNG,
]);
const EVIL_SVG = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onload="alert('onload')">
  <script>alert('script')</script>
  <rect width="10" height="10" fill="#0f766e" onclick="alert('click')"/>
  <a xlink:href="javascript:alert('href')"><circle r="3" fill="#fff"/></a>
  <foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onmouseover="alert('fo')">x</div></foreignObject>
</svg>`;

const MB = 1024 * 1024;
const LOGO_LIMIT = 1 * MB;

let porta: TestPorta;
let token: string;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  token = (await obtainAdminTokens(porta)).accessToken;
  api = adminApi(porta, token);
  tenant = await createTenant(porta, { name: "Branded Org" });
});
afterAll(async () => {
  await porta?.stop();
});

const brandingPath = (orgId = tenant.org.id) => `/organizations/${orgId}/branding`;

async function upload(
  body: Buffer | string,
  contentType: string,
  query = "kind=logo",
  orgId = tenant.org.id,
  headers: Record<string, string> = {},
): Promise<ApiResponse<Asset>> {
  const res = await fetch(`${porta.url}/api/admin${brandingPath(orgId)}/assets?${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType, ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Asset };
}

/** The data fingerprint of the Admin API plus the branding assets and every organization's branding. */
async function fingerprint() {
  const prisma = porta.services.db.prisma;
  const [base, assets, brandings] = await Promise.all([
    dataFingerprint(porta),
    prisma.brandingAsset.count(),
    prisma.organization.findMany({ select: { id: true, branding: true }, orderBy: { id: "asc" } }),
  ]);
  return { ...base, assets, brandings };
}

async function fetchAsset(url: string) {
  const res = await fetch(url);
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe("branding settings", () => {
  it("reads empty settings, updates them with an audit record, and removes values with null", async () => {
    const fresh = await api.get<Settings>(brandingPath());
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({
      organizationId: tenant.org.id,
      displayName: null,
      primaryColor: null,
      backgroundColor: null,
      textColor: null,
      footerText: null,
      logo: null,
      favicon: null,
    });
    const etag = fresh.headers.get("etag")!;
    expect(etag).toMatch(/^"v\d+"$/);

    const change = { displayName: "Acme Identity", primaryColor: "#aa0000", backgroundColor: "#f0f0f0", textColor: "#111", footerText: "Acme Ltd · Support: help@acme.example" };
    const updated = await api.put<Settings>(brandingPath(), change, { "if-match": etag });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject(change);
    expect(updated.headers.get("etag")).not.toBe(etag);
    expect((await api.get<Settings>(brandingPath())).body).toMatchObject(change);

    const entry = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "organization.branding.updated", targetId: tenant.org.id }, orderBy: { id: "desc" } });
    expect(entry).toMatchObject({ actorType: "admin", targetType: "organization", organizationId: tenant.org.id, data: { change } });
    expect(entry?.actorId).toBeTruthy();

    // A stale If-Match is a 409 that writes nothing.
    const before = await fingerprint();
    expectError(await api.put(brandingPath(), { primaryColor: "#000000" }, { "if-match": etag }), 409, "etag_mismatch");
    expect(await fingerprint()).toEqual(before);

    const cleared = await api.put<Settings>(brandingPath(), { footerText: null, textColor: null });
    expect(cleared.body).toMatchObject({ ...change, footerText: null, textColor: null });
    await api.put(brandingPath(), { textColor: "#111111" });
  });

  it("refuses bad input with 422 naming the field, and writes nothing", async () => {
    const { id: otherAsset } = await porta.services.db.prisma.brandingAsset.create({
      data: { organizationId: (await createTenant(porta)).org.id, kind: "logo", contentType: "image/png", sha256: "a".repeat(64), bytes: new Uint8Array(PNG), size: PNG.length },
    });
    const requests: BadRequest[] = [
      { label: "colour name", method: "PUT", path: brandingPath(), body: { primaryColor: "red" }, field: "primaryColor" },
      { label: "five hex digits", method: "PUT", path: brandingPath(), body: { backgroundColor: "#12345" }, field: "backgroundColor" },
      { label: "not hex", method: "PUT", path: brandingPath(), body: { textColor: "#gggggg" }, field: "textColor" },
      { label: "CSS injection", method: "PUT", path: brandingPath(), body: { primaryColor: "#fff;background:url(https://evil.example)" }, field: "primaryColor" },
      { label: "number colour", method: "PUT", path: brandingPath(), body: { primaryColor: 0xffffff }, field: "primaryColor" },
      { label: "unknown field", method: "PUT", path: brandingPath(), body: { cssVariables: { "--porta-x": "red" } }, field: "cssVariables" },
      { label: "oversize name", method: "PUT", path: brandingPath(), body: { displayName: OVERSIZE }, field: "displayName" },
      { label: "oversize footer", method: "PUT", path: brandingPath(), body: { footerText: OVERSIZE }, field: "footerText" },
      { label: "blank name", method: "PUT", path: brandingPath(), body: { displayName: "   " }, field: "displayName" },
      { label: "logo not an id", method: "PUT", path: brandingPath(), body: { logoAssetId: "https://evil.example/logo.png" }, field: "logoAssetId" },
      { label: "unknown logo", method: "PUT", path: brandingPath(), body: { logoAssetId: randomUUID() }, field: "logoAssetId" },
      { label: "another organization's asset", method: "PUT", path: brandingPath(), body: { faviconAssetId: otherAsset }, field: "faviconAssetId" },
      { label: "invalid org id", method: "PUT", path: brandingPath("not-a-uuid"), body: { primaryColor: "#000000" }, field: "path.orgId" },
      { label: "invalid org id (read)", method: "GET", path: brandingPath("not-a-uuid"), field: "path.orgId" },
    ];
    const before = await fingerprint();
    for (const request of requests) {
      expect422(await api.call(request.method, request.path, request.body), request.field, request.label);
    }
    const uploads: Array<[string, ApiResponse<Asset>, string]> = [
      ["wrong kind", await upload(PNG, "image/png", "kind=banner"), "query.kind"],
      ["no kind", await upload(PNG, "image/png", ""), "query.kind"],
      ["unknown query field", await upload(PNG, "image/png", "kind=logo&x=1"), "query.x"],
      ["invalid org id", await upload(PNG, "image/png", "kind=logo", "not-a-uuid"), "path.orgId"],
      ["empty file", await upload(Buffer.alloc(0), "image/png"), "body"],
    ];
    for (const [label, res, field] of uploads) expect422(res, field, label);
    expect(await fingerprint()).toEqual(before);
    expectError(await api.get(brandingPath(randomUUID())), 404, "not_found");
  });

  it("answers 403 without the branding permissions and 401 without a token", async () => {
    const before = await fingerprint();
    await withoutPermission(porta, "admin:branding:write", async () => {
      expectError(await api.put(brandingPath(), { primaryColor: "#000000" }), 403, "forbidden");
      expectError(await upload(PNG, "image/png"), 403, "forbidden");
      expect((await api.get(brandingPath())).status).toBe(200);
    });
    await withoutPermission(porta, "admin:branding:read", async () => {
      expectError(await api.get(brandingPath()), 403, "forbidden");
    });
    expectError(await adminApi(porta, undefined).get(brandingPath()), 401, "unauthorized");
    expect(await fingerprint()).toEqual(before);
  });
});

describe("branding assets", () => {
  it("stores a PNG logo and an icon favicon, serves the exact bytes with immutable caching, and reuses identical uploads", async () => {
    const logo = await upload(PNG, "image/png", "kind=logo");
    expect(logo.status, JSON.stringify(logo.body)).toBe(201);
    expect(logo.body).toMatchObject({ organizationId: tenant.org.id, kind: "logo", contentType: "image/png", size: PNG.length });
    expect(logo.body.url).toBe(`${porta.baseUrl}/assets/branding/${tenant.org.id}/${logo.body.sha256}.png`);

    const served = await fetchAsset(logo.body.url);
    expect(served.res.status).toBe(200);
    expect(served.bytes.equals(PNG)).toBe(true);
    expect(served.res.headers.get("content-type")).toBe("image/png");
    expect(served.res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(served.res.headers.get("x-content-type-options")).toBe("nosniff");

    const favicon = await upload(ICO, "image/x-icon", "kind=favicon");
    expect(favicon.status, JSON.stringify(favicon.body)).toBe(201);
    const icon = await fetchAsset(favicon.body.url);
    expect(icon.bytes.equals(ICO)).toBe(true);
    expect(icon.res.headers.get("content-type")).toBe("image/x-icon");

    const settings = await api.get<Settings>(brandingPath());
    expect(settings.body.logo).toEqual({ assetId: logo.body.id, url: logo.body.url, contentType: "image/png" });
    expect(settings.body.favicon).toEqual({ assetId: favicon.body.id, url: favicon.body.url, contentType: "image/x-icon" });

    const entry = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "organization.branding.asset_uploaded", targetId: tenant.org.id }, orderBy: { id: "desc" } });
    expect(entry).toMatchObject({ actorType: "admin", data: { change: { favicon: { assetId: favicon.body.id, sha256: favicon.body.sha256, size: ICO.length } } } });

    const again = await upload(PNG, "image/png", "kind=logo");
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(logo.body.id);
    expect(await porta.services.db.prisma.brandingAsset.count({ where: { organizationId: tenant.org.id } })).toBe(2);
  });

  it("answers 404 for an unknown hash, a wrong extension or another organization", async () => {
    const logo = await upload(PNG, "image/png", "kind=logo");
    const base = `${porta.baseUrl}/assets/branding`;
    for (const url of [
      `${base}/${tenant.org.id}/${"0".repeat(64)}.png`,
      `${base}/${tenant.org.id}/${logo.body.sha256}.svg`,
      `${base}/${randomUUID()}/${logo.body.sha256}.png`,
      `${base}/not-an-id/${logo.body.sha256}.png`,
      `${base}/${tenant.org.id}/${logo.body.sha256.toUpperCase()}.png`,
    ]) {
      const res = await fetch(url);
      await res.arrayBuffer();
      expect(res.status, url).toBe(404);
    }
  });

  it("sanitizes an SVG: the served bytes carry no script, handler, javascript: link or foreignObject", async () => {
    const res = await upload(EVIL_SVG, "image/svg+xml", "kind=logo");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.url).toMatch(/\.svg$/);
    const served = await fetchAsset(res.body.url);
    const text = served.bytes.toString("utf8");
    for (const bad of ["<script", "alert", "onload", "onclick", "onmouseover", "javascript:", "foreignObject"]) expect(text, bad).not.toContain(bad);
    expect(text).toContain('<rect width="10" height="10" fill="#0f766e"></rect>');
    expect(served.res.headers.get("content-type")).toBe("image/svg+xml");
    expect(served.res.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(served.res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const stored = await porta.services.db.prisma.brandingAsset.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(Buffer.from(stored.bytes).equals(served.bytes)).toBe(true);
  });

  it("refuses a file whose bytes are not its declared type, and types it does not accept", async () => {
    const before = await fingerprint();
    expect422(await upload(PNG, "image/svg+xml"), "body", "PNG declared as SVG");
    expect422(await upload(EVIL_SVG, "image/png"), "body", "SVG declared as PNG");
    expect422(await upload(ICO, "image/jpeg"), "body", "icon declared as JPEG");
    expect422(await upload("<html><body><script>alert(1)</script></body></html>", "image/svg+xml"), "body", "HTML declared as SVG");
    expectError(await upload("<html></html>", "text/html"), 415, "unsupported_media_type");
    expectError(await upload(PNG, "application/octet-stream"), 415, "unsupported_media_type");
    expect(await fingerprint()).toEqual(before);
  });

  it("refuses a favicon over its limit", async () => {
    const before = await fingerprint();
    const big = Buffer.concat([ICO, Buffer.alloc(256 * 1024)]);
    expectError(await upload(big, "image/x-icon", "kind=favicon"), 413, "payload_too_large");
    expect(await fingerprint()).toEqual(before);
  });
});

/** A raw HTTP upload, so that the test controls exactly what is sent and when. */
function rawUpload(headers: Record<string, string>) {
  const url = new URL(`${porta.url}/api/admin${brandingPath()}/assets?kind=logo`);
  const req = http.request(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "image/png", ...headers } });
  // The server closes the connection after its 413; writes still under way then fail.
  req.on("error", () => {});
  const response = once(req, "response").then(async (args) => {
    const res = args[0] as http.IncomingMessage;
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return { status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as { error: { code: string } } };
  });
  return { req, response };
}

describe("upload size limit", () => {
  it("answers 413 to Content-Length: 20971520 before a byte of the body is sent", async () => {
    const before = await fingerprint();
    const { req, response } = rawUpload({ "content-length": String(20 * MB) });
    req.flushHeaders();
    const answered = await response;
    expect(answered.status).toBe(413);
    expect(answered.body.error.code).toBe("payload_too_large");
    expect(req.socket?.bytesWritten ?? 0).toBeLessThan(4096);
    req.destroy();
    expect(await fingerprint()).toEqual(before);
  });

  it("answers 413 to a 20 MB streamed body without Content-Length once the limit is passed, long before the end", async () => {
    const before = await fingerprint();
    const { req, response } = rawUpload({});
    let answered: Awaited<typeof response> | undefined;
    void response.then((value) => (answered = value));
    const chunk = Buffer.concat([PNG, Buffer.alloc(64 * 1024 - PNG.length)]);
    const stopped = Promise.race([response, once(req, "close")]);
    let sent = 0;
    while (sent < 20 * MB && !answered) {
      sent += chunk.length;
      if (!req.write(chunk)) await Promise.race([once(req, "drain"), stopped]);
    }
    const sentWhenAnswered = sent;
    const result = await response;
    req.destroy();
    expect(result.status).toBe(413);
    expect(result.body.error.code).toBe("payload_too_large");
    expect(req.getHeader("content-length")).toBeUndefined();
    // The server stopped reading at the limit: the client was still far from the end of its
    // 20 MB (what it had sent beyond the limit sat in socket buffers).
    expect(sentWhenAnswered).toBeGreaterThan(LOGO_LIMIT);
    expect(sentWhenAnswered).toBeLessThan(10 * MB);
    expect(await fingerprint()).toEqual(before);
  });
});

describe("login page", () => {
  it("shows the logo, favicon, colours and footer right after an update, with no restart", async () => {
    const org = await createTenant(porta, { name: "Plain Org" });
    const plain = await openLoginPage(org);
    expect(mainOf(plain.html)).toMatch(/^<main class="page">/);
    expect(mainOf(plain.html)).toContain('<p class="brand-name">Plain Org</p>');
    expect(plain.html).not.toContain('rel="icon"');

    const logo = await upload(EVIL_SVG, "image/svg+xml", "kind=logo", org.org.id);
    const favicon = await upload(ICO, "image/x-icon", "kind=favicon", org.org.id);
    expect([logo.status, favicon.status]).toEqual([201, 201]);
    const put = await api.put(brandingPath(org.org.id), { displayName: "Plain Brand", primaryColor: "#123456", backgroundColor: "#fafafa", textColor: "#222222", footerText: "Footer <b>text</b>" });
    expect(put.status).toBe(200);

    const page = await openLoginPage(org);
    const main = mainOf(page.html);
    const logoPath = new URL(logo.body.url).pathname;
    const faviconPath = new URL(favicon.body.url).pathname;
    expect(main).toMatch(/^<main class="page" style="--porta-primary:#123456;--porta-bg:#fafafa;--porta-text:#222222">/);
    expect(main).toContain(`<img src="${logoPath}" alt="Plain Brand" class="brand-logo"/>`);
    expect(main).toContain('<footer class="brand-footer">Footer &lt;b&gt;text&lt;/b&gt;</footer>');
    expect(page.html).toContain(`<link rel="icon" href="${faviconPath}"/>`);
    expect((await fetch(`${porta.baseUrl}${logoPath}`)).status).toBe(200);

    // Removing the logo brings the name back.
    expect((await api.put(brandingPath(org.org.id), { logoAssetId: null, faviconAssetId: null })).status).toBe(200);
    const after = await openLoginPage(org);
    expect(mainOf(after.html)).toContain('<p class="brand-name">Plain Brand</p>');
    expect(after.html).not.toContain('rel="icon"');
  });
});

describe("OpenAPI", () => {
  it("describes the upload body by its image media types", async () => {
    const doc = await api.get<{ paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>> }>("/openapi.json");
    const uploadOp = doc.body.paths["/api/admin/organizations/{orgId}/branding/assets"]?.post;
    expect(uploadOp?.operationId).toBe("branding.uploadAsset");
    expect(Object.keys(uploadOp?.requestBody?.content ?? {}).sort()).toEqual(["image/jpeg", "image/png", "image/svg+xml", "image/webp", "image/x-icon"]);
    expect(Object.keys(uploadOp?.responses ?? {})).toEqual(expect.arrayContaining(["201", "413", "415", "422"]));
    expect(doc.body.paths["/api/admin/organizations/{orgId}/branding"]?.put?.operationId).toBe("branding.updateSettings");
    expect(doc.body.paths["/api/admin/organizations/{orgId}/branding"]?.get?.operationId).toBe("branding.getSettings");
  });
});
