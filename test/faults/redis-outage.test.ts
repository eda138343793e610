import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { authorizationUrl, basicAuth, CookieJar, issuerOf, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivateRedis, type RedisServer } from "../support/process";
import { openLoginPage, PASSWORD, passwordLoginToCallback, redeem } from "../login/helpers";

/**
 * Redis only accelerates (decision 024): killed in the middle of a mixed load, restarted empty or
 * frozen, it fails no request and signs nobody out. Before, with Redis killed every login page,
 * client_credentials grant and introspection answered 500, and a Redis that came back empty had
 * lost every session. The Redis is a private server this test kills; PostgreSQL is the run's own.
 */
const SLOW = { timeout: 180_000 };
const REDIRECT_URI = "https://rp.example.com/cb";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Redis killed, restarted empty and frozen under load", () => {
  let redis: RedisServer;
  let porta: TestPorta;
  let org: OrgRef;
  let client: { id: string };
  let secret: string;
  const emails: string[] = [];
  let admin: Awaited<ReturnType<typeof obtainAdminTokens>>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    porta = await startTestPorta({ env: { REDIS_URL: redis.url } });
    const prisma = porta.services.db.prisma;
    org = await createOrganization(prisma);
    // Each sign-in uses its own account, so that no per-account limit is what refuses it.
    for (let i = 0; i < 40; i++) emails.push((await createUser(prisma, org.id, { email: `load-${i}@example.com`, password: PASSWORD })).email);
    const created = await createClient(prisma, org.id, { grantTypes: ["authorization_code", "refresh_token", "client_credentials"], redirectUris: [REDIRECT_URI] });
    client = created.client;
    secret = created.secret!.value;
    admin = await obtainAdminTokens(porta);
  }, 180_000);

  afterAll(async () => {
    await porta?.stop();
    redis?.signal("SIGCONT");
    await redis?.stop();
  }, 60_000);

  /** A whole sign-in through the real login page with a password (consent included), ending with tokens. */
  async function signIn(email: string) {
    const page = await openLoginPage({ org: { ...org, name: org.slug }, client, secret, issuer: issuerOf(porta, org), redirectUri: REDIRECT_URI });
    if (page.res.status !== 200) throw new Error(`login page answered ${page.res.status}`);
    const { callback } = await passwordLoginToCallback(page, email, PASSWORD, REDIRECT_URI);
    return { tokens: await redeem(page, callback), browser: page.browser, config: page.config };
  }

  async function clientCredentials(): Promise<string> {
    const answer = await postForm(`${issuerOf(porta, org)}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret) });
    if (answer.status !== 200) throw new Error(`client_credentials answered ${answer.status}`);
    return answer.body.access_token as string;
  }

  async function introspect(token: string): Promise<boolean> {
    const answer = await postForm(`${issuerOf(porta, org)}/token/introspection`, { token }, { authorization: basicAuth(client.id, secret) });
    if (answer.status !== 200) throw new Error(`introspection answered ${answer.status}`);
    return answer.body.active === true;
  }

  async function loginPage(): Promise<void> {
    const jar = new CookieJar();
    const started = await jar.fetch(authorizationUrl(porta, org, client, { redirect_uri: REDIRECT_URI, scope: "openid", state: "s" }));
    await started.body?.cancel();
    const page = await jar.fetch(new URL(started.headers.get("location")!, porta.baseUrl));
    await page.body?.cancel();
    if (page.status !== 200) throw new Error(`login page answered ${page.status}`);
  }

  async function adminCall(): Promise<void> {
    const answer = await adminApi(porta, admin.accessToken).get("/organizations");
    if (answer.status !== 200) throw new Error(`Admin API answered ${answer.status}`);
  }

  /** Runs the mixed load until `until` resolves; returns every failure and the slowest request. */
  async function mixedLoad(until: Promise<unknown>, firstEmail: number) {
    let done = false;
    void until.then(() => (done = true));
    const failures: string[] = [];
    let slowest = 0;
    let requests = 0;
    let nextEmail = firstEmail;
    const timed = async (name: string, work: () => Promise<unknown>) => {
      const started = performance.now();
      try {
        await work();
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`);
      }
      slowest = Math.max(slowest, performance.now() - started);
      requests++;
    };
    const worker = async (index: number) => {
      while (!done) {
        if (index === 0) await timed("sign-in", () => signIn(emails[nextEmail++ % emails.length]!));
        if (index === 1) await timed("grant+introspection", async () => expect(await introspect(await clientCredentials())).toBe(true));
        if (index === 2) await timed("login page", loginPage);
        if (index === 3) await timed("admin", adminCall);
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    return { failures, slowest, requests };
  }

  it("fails no request while Redis is killed and restarted empty, and keeps every session and token", SLOW, async () => {
    const before = await signIn(emails[0]!);
    const ccToken = await clientCredentials();

    const outage = (async () => {
      await sleep(1_500);
      redis.signal("SIGKILL");
      await sleep(4_000);
      const health = await fetch(`${porta.url}/health`);
      expect(await health.json()).toMatchObject({ status: "degraded", checks: { database: "ok", cache: "unavailable" } });
      await redis.stop();
      await redis.start();
      await sleep(2_500);
    })();
    const load = await mixedLoad(outage, 1);
    await outage;
    expect(load.failures).toEqual([]);
    expect(load.requests).toBeGreaterThan(20);

    // Redis came back empty: the session and the tokens are still good, the admin's refresh token too.
    const again = await before.browser.get(authorizationUrl(porta, org, client, { redirect_uri: REDIRECT_URI, scope: "openid", prompt: "none", state: "s" }).href);
    const location = new URL(again.headers.get("location")!, porta.baseUrl);
    expect(location.origin + location.pathname).toBe(REDIRECT_URI);
    expect(location.searchParams.get("code")).toBeTruthy();
    const userinfo = await oidc.fetchUserInfo(before.config, before.tokens.access_token, before.tokens.claims()!.sub);
    expect(userinfo.email).toBe(emails[0]);
    expect(await introspect(ccToken)).toBe(true);
    const adminRefreshed = await oidc.refreshTokenGrant(admin.config, admin.refreshToken!);
    expect(adminRefreshed.access_token).toBeTruthy();
    admin = { ...admin, accessToken: adminRefreshed.access_token, refreshToken: adminRefreshed.refresh_token ?? admin.refreshToken };
    const health = await fetch(`${porta.url}/health`);
    expect(await health.json()).toMatchObject({ status: "ok" });
  });

  it("answers within the cache's time bound plus the database's while Redis is frozen", SLOW, async () => {
    const frozen = (async () => {
      await sleep(500);
      redis.signal("SIGSTOP");
      await sleep(5_000);
      redis.signal("SIGCONT");
      await sleep(500);
    })();
    const load = await mixedLoad(frozen, 20);
    await frozen;
    expect(load.failures).toEqual([]);
    // A Redis command gives up after 500 ms, and then the cache is left alone for a moment: a whole
    // sign-in (about ten requests) pays that once, not once per lookup (over 5 s before).
    expect(load.slowest).toBeLessThan(4_000);
  });
});
