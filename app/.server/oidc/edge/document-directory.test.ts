import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Organization } from "~/generated/prisma/client";
import { createDocumentDirectory, organizationHash, type DocumentDirectory, type DocumentDirectoryOptions } from "./document-directory";
import type { DescribedOrganization, TenantProvider } from "../provider/registry";
import type { DocumentTemplate, DocumentTemplates } from "./well-known";

const BASE_URL = "https://id.example.test";
const TEMPLATE: DocumentTemplate = { id: "t1", parts: ['{"issuer":"', '","jwks_uri":"', '/jwks"}'], discoveryType: "application/json; charset=utf-8", jwksType: "application/jwk-set+json; charset=utf-8" };

function describedOf(slug: string, kid = `${slug}-key`, keysChangeAt = Infinity): DescribedOrganization {
  return {
    organization: { id: `${slug}-id`, slug, status: "active" } as Organization,
    issuer: `${BASE_URL}/${slug}`,
    customClaims: [],
    publicJwks: [{ kty: "EC", kid, crv: "P-256", x: "x", y: "y" }],
    keysChangeAt,
  };
}

/** The database as the registry reads it: what `describe*` answer, and how often they were asked. */
function fakeRegistry(slugs: string[]) {
  const db = new Map(slugs.map((slug) => [slug, describedOf(slug)]));
  const calls = { describe: 0, pages: 0, many: 0, get: 0 };
  let dropListener: (organizationId: string) => void = () => {};
  const registry: DocumentDirectoryOptions["registry"] = {
    describe: (slug) => {
      calls.describe++;
      return Promise.resolve(db.get(slug));
    },
    describePage: (after, limit) => {
      calls.pages++;
      const page = [...db.keys()].sort().filter((slug) => slug > after).slice(0, limit);
      return Promise.resolve({ described: page.map((slug) => db.get(slug)!), last: page.length === limit ? page[page.length - 1] : undefined });
    },
    describeMany: (wanted) => {
      calls.many++;
      return Promise.resolve(new Map(wanted.flatMap((slug) => (db.has(slug) ? [[slug, db.get(slug)!] as const] : []))));
    },
    get: () => {
      calls.get++;
      return Promise.resolve<TenantProvider | undefined>(undefined);
    },
    onDrop: (listener) => void (dropListener = listener),
  };
  return { db, calls, registry, drop: (organizationId: string) => dropListener(organizationId) };
}

const templates: DocumentTemplates = { of: () => Promise.resolve(TEMPLATE), ready: (id) => (id === TEMPLATE.id ? TEMPLATE : undefined) };

const open: DocumentDirectory[] = [];
afterEach(() => open.splice(0).forEach((directory) => directory.close()));

function directoryOf(registry: DocumentDirectoryOptions["registry"], options: Partial<DocumentDirectoryOptions> = {}) {
  const directory = createDocumentDirectory({ registry, templates, baseUrl: BASE_URL, maxAgeMs: 60_000, logger: pino({ level: "silent" }), pageSize: 2, ...options });
  open.push(directory);
  return directory;
}

const DISCOVERY = "/.well-known/openid-configuration";
const JWKS = "/.well-known/jwks";
const discoveryOf = (directory: DocumentDirectory, slug: string) => directory.get(slug, DISCOVERY)?.body.toString();
const kidOf = (directory: DocumentDirectory, slug: string) => (JSON.parse(directory.get(slug, JWKS)!.body.toString()) as { keys: Array<{ kid: string }> }).keys[0]!.kid;

describe("the directory of discovery documents", () => {
  it("holds every active organization after a fill, page by page, and answers each from memory", async () => {
    const { registry, calls } = fakeRegistry(["a", "b", "c", "d", "e"]);
    const directory = directoryOf(registry);
    expect(directory.get("a", DISCOVERY)).toBeUndefined();
    directory.fillInBackground();
    await directory.filled();
    expect(calls.pages).toBe(3);
    expect(discoveryOf(directory, "c")).toBe(`{"issuer":"${BASE_URL}/c","jwks_uri":"${BASE_URL}/c/jwks"}`);
    expect(discoveryOf(directory, "E")).toBe(`{"issuer":"${BASE_URL}/e","jwks_uri":"${BASE_URL}/e/jwks"}`);
    expect(kidOf(directory, "a")).toBe("a-key");
    expect(directory.stats().entries).toBe(5);
    expect(calls.describe).toBe(0);
  });

  it("answers a miss in one read and keeps it; an unknown organization is not kept", async () => {
    const { registry, calls, db } = fakeRegistry([]);
    const directory = directoryOf(registry);
    db.set("late", describedOf("late"));
    const made = await directory.fetch("late", DISCOVERY, false);
    expect(made?.body.toString()).toContain(`${BASE_URL}/late`);
    expect(discoveryOf(directory, "late")).toContain(`${BASE_URL}/late`);
    expect(calls.describe).toBe(1);
    // Not described (unknown, inactive, or its provider has more to do): the provider's path, nothing kept.
    expect(await directory.fetch("nobody", DISCOVERY, false)).toBeUndefined();
    expect(calls.get).toBe(1);
    expect(directory.get("nobody", JWKS)).toBeUndefined();
  });

  it("drops an organization that changed, and everything on '*' (then fills again)", async () => {
    const { registry, db, drop, calls } = fakeRegistry(["a", "b"]);
    const directory = directoryOf(registry);
    directory.fillInBackground();
    await directory.filled();
    db.set("a", describedOf("a", "rotated"));
    drop("a-id");
    expect(directory.get("a", JWKS)).toBeUndefined();
    expect(kidOf(directory, "b")).toBe("b-key");
    await directory.fetch("a", JWKS, false);
    expect(kidOf(directory, "a")).toBe("rotated");

    db.set("b", describedOf("b", "b-rotated"));
    const pagesBefore = calls.pages;
    drop("*");
    expect(directory.get("a", JWKS)).toBeUndefined();
    await directory.filled();
    expect(calls.pages).toBeGreaterThan(pagesBefore);
    expect(kidOf(directory, "b")).toBe("b-rotated");
  });

  it("does not keep what was read while the organization changed", async () => {
    const { registry, db, drop } = fakeRegistry(["a"]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowDescribe = registry.describe;
    const directory = directoryOf({ ...registry, describe: async (slug) => (await gate, slowDescribe(slug)) });
    const pending = directory.fetch("a", JWKS, false);
    drop("a-id");
    db.set("a", describedOf("a", "rotated"));
    release();
    await pending;
    expect(directory.get("a", JWKS)).toBeUndefined();
  });

  it("fills only up to its budget, without evicting what requests made", async () => {
    const { registry, db } = fakeRegistry(["a", "b", "c", "d", "e", "f"]);
    db.set("zz-asked", describedOf("zz-asked"));
    // Room for three entries by the directory's estimate (330 bytes each plus the packed keys and the slug: 340–354 here).
    const directory = directoryOf(registry, { maxBytes: 1_100 });
    await directory.fetch("zz-asked", JWKS, false);
    directory.fillInBackground();
    await directory.filled();
    expect(directory.stats().entries).toBe(3);
    expect(directory.get("zz-asked", JWKS)).toBeDefined();
    expect(directory.stats().bytes).toBeLessThanOrEqual(directory.stats().maxBytes);
  });

  it("stops answering an entry once one of its keys is due to retire", async () => {
    let clock = 1_000;
    const { registry, db } = fakeRegistry([]);
    db.set("a", describedOf("a", "a-key", 5_000));
    const directory = directoryOf(registry, { now: () => clock });
    await directory.fetch("a", JWKS, false);
    expect(directory.get("a", JWKS)).toBeDefined();
    clock = 5_000;
    expect(directory.get("a", JWKS)).toBeUndefined();
  });

  it("describes what it holds again once per maximum age: a change whose notice was missed is caught", async () => {
    const { registry, db, calls } = fakeRegistry(["a", "b"]);
    const directory = directoryOf(registry, { maxAgeMs: 50 });
    directory.fillInBackground();
    await directory.filled();
    db.set("a", describedOf("a", "changed-quietly"));
    db.delete("b");
    await expect.poll(() => calls.many, { timeout: 2_000 }).toBeGreaterThan(0);
    await expect.poll(() => directory.get("b", JWKS), { timeout: 2_000 }).toBeUndefined();
    expect(kidOf(directory, "a")).toBe("changed-quietly");
  });

  it("writes the issuer with the slug as stored", async () => {
    const { registry, db } = fakeRegistry([]);
    db.set("mixed", { ...describedOf("mixed"), organization: { id: "m-id", slug: "Mixed", status: "active" } as Organization });
    const directory = directoryOf(registry);
    await directory.fetch("MIXED", JWKS, false);
    expect(discoveryOf(directory, "mixed")).toContain(`${BASE_URL}/Mixed"`);
  });

  it("drops the entries of an organization whose id's hash another's shares, and only those", async () => {
    // Two ids with the same FNV-1a hash (found by search): a drop of either removes both, which costs a read.
    expect(organizationHash("id-149599")).toBe(organizationHash("id-312382"));
    const { registry, db, drop } = fakeRegistry([]);
    const described = (slug: string, id: string) => ({ ...describedOf(slug), organization: { id, slug, status: "active" } as Organization });
    db.set("one", described("one", "id-149599"));
    db.set("two", described("two", "id-312382"));
    db.set("three", described("three", "id-3"));
    const directory = directoryOf(registry);
    for (const slug of ["one", "two", "three"]) await directory.fetch(slug, JWKS, false);
    drop("id-312382");
    expect(directory.get("one", JWKS)).toBeUndefined();
    expect(directory.get("two", JWKS)).toBeUndefined();
    expect(directory.get("three", JWKS)).toBeDefined();
    // Made again and dropped again: the index follows replacements and deletions.
    for (const slug of ["one", "two"]) await directory.fetch(slug, JWKS, false);
    drop("id-149599");
    expect(directory.get("two", JWKS)).toBeUndefined();
    expect(directory.stats().entries).toBe(1);
  });
});
