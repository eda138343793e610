import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, type Tenant } from "./helpers";

/**
 * The Admin API's user search (`q=`) answers from trigram indexes, not by reading every user of
 * the organization: the statements the search request really sends (its count and its page),
 * EXPLAINed with their own parameters, are answered by the indexes on email, given and family
 * name. At a million users a scan costs seconds per request (docs/sizing.md).
 */
const USERS = 50_000;
const md5Of = (text: string) => createHash("md5").update(text).digest("hex");
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  // Plain SQL for speed; names vary like people's, so that a search matches a few of them.
  await porta.services.db.executeSql(
    `INSERT INTO "User" ("id", "organizationId", "email", "emailVerified", "givenName", "familyName", "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, substr(md5('e' || i), 1, 12) || '@' || (ARRAY['example.com','mail.test','corp.example'])[1 + i % 3],
            true, (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald'])[1 + i % 6], 'Family' || md5(i::text), now()
       FROM generate_series(1, ${USERS}) AS i`,
    [tenant.org.id],
  );
  await porta.services.db.executeSql('ANALYZE "User"');
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

/** The statements a request sent to the User table, with their parameters. */
async function userStatementsOf(request: () => Promise<unknown>): Promise<Array<{ sql: string; params: unknown[] }>> {
  const seen: Array<{ sql: string; params: unknown[] }> = [];
  const stop = porta.services.db.onQuery((sql, _ms, params) => {
    if (/FROM "public"\."User"/.test(sql)) seen.push({ sql, params: params ? (JSON.parse(params) as unknown[]) : [] });
  });
  try {
    await request();
  } finally {
    stop();
  }
  return seen;
}

/**
 * The statement's plan with sequential scans priced out: a table of a test's size is read whole
 * faster than through any index, so only this shows whether an index can answer the statement at
 * all (without one, the plan still reads the whole table). The bench measures the real choice at
 * a million users (docs/benchmarks.md).
 */
async function planOf(statement: { sql: string; params: unknown[] }): Promise<string> {
  const lines = (rows: unknown[]) => (rows as Array<Record<string, string>>).map((row) => Object.values(row)[0]).join("\n");
  const url = porta.services.config.databaseUrl;
  if (!url) {
    // The embedded database has one connection, and nothing else runs meanwhile.
    await porta.services.db.executeSql("SET enable_seqscan = off");
    try {
      return lines((await porta.services.db.executeSql(`EXPLAIN ${statement.sql}`, statement.params)).rows);
    } finally {
      await porta.services.db.executeSql("RESET enable_seqscan");
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SET enable_seqscan = off");
    return lines((await client.query(`EXPLAIN ${statement.sql}`, statement.params)).rows);
  } finally {
    await client.end();
  }
}

it.each([
  // Part of the address of the 12,345th person.
  { q: () => md5Of("e12345").slice(2, 10), field: "email" },
  { q: () => `family${md5Of("777").slice(0, 6)}`, field: "family name" },
  { q: () => `FAMILY${md5Of("777").slice(0, 6).toUpperCase()}`, field: "family name, in capitals" },
])("a search by $field reads the trigram indexes for its count and its page", async ({ q }) => {
  let body: { total: number; data: unknown[] } | undefined;
  const statements = await userStatementsOf(async () => {
    const res = await api.get<{ total: number; data: unknown[] }>(`/organizations/${tenant.org.id}/users?q=${q()}`);
    expect(res.status).toBe(200);
    body = res.body;
  });
  expect(body!.total).toBeGreaterThan(0);
  expect(body!.total).toBeLessThan(USERS / 50);
  // The count and the page (offset mode: two statements), each planned on the indexes.
  expect(statements.length).toBeGreaterThanOrEqual(2);
  for (const statement of statements) {
    const plan = await planOf(statement);
    expect(plan, plan).not.toMatch(/Seq Scan on "User"/);
    expect(plan, plan).toMatch(/Bitmap Index Scan on "User_(email|givenName|familyName)_idx"/);
  }
});
