import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, unique, type Tenant } from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * The user list's total at scale: without a filter it is the organization's user count kept by
 * the database in the transaction of every insert and delete (never a count of the users), exact
 * whoever writes the users; a search or filter counts at most 1,000 matches and past that says
 * "at least 1,000" (`totalIsLowerBound`), never a made-up exact number.
 */
interface User {
  id: string;
  email: string;
  givenName: string | null;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const usersOf = (t: Tenant) => `/organizations/${t.org.id}/users`;

async function totalOf(t: Tenant, query = "page=1&pageSize=1"): Promise<Page<User>> {
  const res = await api.get<Page<User>>(`${usersOf(t)}?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Users written with plain SQL, as a migration, a script or a future import path would. */
async function insertUsers(t: Tenant, count: number, prefix: string) {
  await porta.services.db.executeSql(
    `INSERT INTO "User" ("id", "organizationId", "email", "emailVerified", "givenName", "familyName", "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, $2 || i || '@example.com', true, (ARRAY['Ada','Grace'])[1 + i % 2], 'Family' || i, now()
       FROM generate_series(1, $3::int) AS i`,
    [t.org.id, prefix, count],
  );
}

/** The statements a request sent, in order. */
async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const stop = porta.services.db.onQuery((sql) => seen.push(sql));
  try {
    await request();
  } finally {
    stop();
  }
  return seen;
}

describe("the unfiltered list's total", () => {
  it("is read from the kept count, not by counting the organization's users", async () => {
    const t = await createTenant(porta);
    await insertUsers(t, 30, "read");
    for (const query of ["page=1&pageSize=5", "limit=5"]) {
      let page: Page<User> | undefined;
      const statements = await statementsOf(async () => (page = await totalOf(t, query)));
      expect(page).toMatchObject({ total: 30 });
      expect(page).not.toHaveProperty("totalIsLowerBound");
      expect(statements.filter((sql) => /COUNT\(/i.test(sql) && /"User"/.test(sql)), query).toEqual([]);
    }
  });

  it("stays exact through creates (concurrent ones too), deletes, plain SQL and a rolled-back transaction", async () => {
    const t = await createTenant(porta);
    expect((await totalOf(t)).total).toBe(0);
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post<User>(usersOf(t), { email: `${unique(`c${i}`)}@example.com` })),
    );
    expect(created.map((res) => res.status)).toEqual(Array(8).fill(201));
    expect((await totalOf(t)).total).toBe(8);

    expect((await api.delete(`${usersOf(t)}/${created[0]!.body.id}`)).status).toBe(204);
    expect((await api.delete(`${usersOf(t)}/${created[1]!.body.id}`)).status).toBe(204);
    expect((await totalOf(t)).total).toBe(6);

    await insertUsers(t, 25, "sql");
    expect((await totalOf(t)).total).toBe(31);
    await porta.services.db.executeSql(`DELETE FROM "User" WHERE "organizationId" = $1::uuid AND "email" LIKE 'sql1%'`, [t.org.id]);
    // sql1, sql10..sql19: 11 of the 25.
    expect((await totalOf(t)).total).toBe(20);

    await expect(
      porta.services.db.rawTransaction(async (tx) => {
        await tx.query(
          `INSERT INTO "User" ("id", "organizationId", "email", "updatedAt") SELECT gen_random_uuid(), $1::uuid, 'gone' || i || '@example.com', now() FROM generate_series(1, 5) AS i`,
          [t.org.id],
        );
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect((await totalOf(t)).total).toBe(20);

    // Every figure above is the real number of users.
    expect(await porta.services.db.prisma.user.count({ where: { organizationId: t.org.id } })).toBe(20);
  });

  it("counts the users an import creates, in the imported organization only", async () => {
    // An organization without clients: the package's clients would belong elsewhere on this server.
    const slugOf = unique("export");
    const org = await porta.services.db.prisma.organization.create({ data: { slug: slugOf, name: "Export" } });
    const source = { org: { id: org.id, slug: slugOf } } as Tenant;
    await insertUsers(source, 12, "imp");
    const pkg = await api.get<Record<string, unknown>>(`/organizations/${source.org.id}/export`);
    expect(pkg.status).toBe(200);
    const slug = unique("imported");
    const applied = await api.post<{ organizationId: string; applied: boolean }>("/imports/apply", { package: pkg.body, slug });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const imported = { ...source, org: { id: applied.body.organizationId, slug } };
    expect((await totalOf(imported)).total).toBe(12);
    expect((await totalOf(source)).total).toBe(12);
  });

  it("drops with its organization", async () => {
    const t = await createTenant(porta);
    await insertUsers(t, 3, "purge");
    await porta.services.db.prisma.organization.delete({ where: { id: t.org.id } });
    expect(await porta.services.db.prisma.organizationUserCount.findUnique({ where: { organizationId: t.org.id } })).toBeNull();
  });
});

describe("a filtered list's total", () => {
  let big: Tenant;
  beforeAll(async () => {
    big = await createTenant(porta);
    // 1,050 users, every other one a Grace: "grace" matches 525, "example.com" all.
    await insertUsers(big, 1_050, "big");
  }, 120_000);

  it("past 1,000 matches says at least 1,000, on offset and cursor pages", async () => {
    const broad = await totalOf(big, "q=example.com&page=2&pageSize=20");
    expect(broad).toMatchObject({ total: 1_000, totalIsLowerBound: true, page: 2, pageSize: 20 });
    expect(broad.data).toHaveLength(20);
    const byStatus = await totalOf(big, "status=active&page=1&pageSize=5");
    expect(byStatus).toMatchObject({ total: 1_000, totalIsLowerBound: true });

    const first = await totalOf(big, "q=example.com&limit=50");
    expect(first).toMatchObject({ total: 1_000, totalIsLowerBound: true });
    const second = await totalOf(big, `q=example.com&limit=50&cursor=${first.cursor!}`);
    expect(second).toMatchObject({ total: 1_000, totalIsLowerBound: true });
    expect(second.data.map((u) => u.id)).not.toContain(first.data[0]!.id);
  });

  it("is exact below the bound, and the unfiltered list is exact above it", async () => {
    const graces = await totalOf(big, "q=grace");
    expect(graces.total).toBe(525);
    expect(graces).not.toHaveProperty("totalIsLowerBound");
    const one = await totalOf(big, "q=big471@");
    expect(one.total).toBe(1);
    expect(one.data.map((u) => u.email)).toEqual(["big471@example.com"]);
    const all = await totalOf(big, "limit=10");
    expect(all.total).toBe(1_050);
    expect(all).not.toHaveProperty("totalIsLowerBound");
  });
});
