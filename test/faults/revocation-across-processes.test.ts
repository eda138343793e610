import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient, createOrganization } from "../support/factories";
import { basicAuth, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * Two Porta processes on one database: each answers introspections of client_credentials
 * tokens from its memory of the revocations (oidc/storage/revoked-tokens.ts). A token revoked at one
 * must be inactive at the other as soon as the revocation's notification arrives (well within a
 * second), and stay so after the other restarts. A private PostgreSQL (two processes cannot
 * share the embedded database).
 */
let postgres: PostgresServer;
const processes: TestPorta[] = [];
let org: OrgRef;
let shared: Parameters<typeof startTestPorta>[0];
const at = (porta: TestPorta, path: string) => `${porta.url}/${org.slug}${path}`;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  // One public address for both, as behind a load balancer: each is reached at its own port.
  shared = { databaseUrl: postgres.url, env: { ENCRYPTION_KEY: randomBytes(32).toString("base64"), BASE_URL: "http://porta.test" } };
  processes.push(await startTestPorta(shared));
  processes.push(await startTestPorta(shared));
  org = await createOrganization(processes[0]!.services.db.prisma);
}, 180_000);
afterAll(async () => {
  for (const porta of processes) await porta.stop();
  await postgres?.dispose();
}, 60_000);

it("a client_credentials token revoked at one process is inactive at the other within a second, and after it restarts", { timeout: 120_000 }, async () => {
  const [a, b] = processes as [TestPorta, TestPorta];
  const { client, secret } = await createClient(a.services.db.prisma, org.id, { grantTypes: ["client_credentials"] });
  const auth = { authorization: basicAuth(client.id, secret!.value) };
  const token = (await postForm(at(a, "/token"), { grant_type: "client_credentials" }, auth)).body.access_token as string;
  const introspectAt = async (porta: TestPorta) => (await postForm(at(porta, "/token/introspection"), { token }, auth)).body.active;
  // Several answers, so that B's memory of the revocations is loaded and in use.
  for (let i = 0; i < 20; i++) expect(await introspectAt(b)).toBe(true);

  expect((await postForm(at(a, "/token/revocation"), { token }, auth)).status).toBe(200);
  const revokedAt = Date.now();
  expect(await introspectAt(a)).toBe(false);
  let active = await introspectAt(b);
  while (active && Date.now() - revokedAt < 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    active = await introspectAt(b);
  }
  expect(active).toBe(false);
  expect(Date.now() - revokedAt).toBeLessThan(1_000);

  await b.stop();
  processes[1] = await startTestPorta(shared);
  expect(await introspectAt(processes[1])).toBe(false);
});
