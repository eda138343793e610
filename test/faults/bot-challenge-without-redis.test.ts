import { solveChallenge } from "altcha-lib/v1";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BotChallengeSchema, type BotChallenge } from "~/schemas/bot-challenge";
import { csrfOf } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivateRedis, type RedisServer } from "../support/process";
import { createTenant, mainOf, message, openLoginPage, PASSWORD, type LoginPage, type Tenant } from "../login/helpers";

/**
 * Redis plays no part in bot protection (decision 091): challenges are stateless and their
 * single use is counted in PostgreSQL. With Redis killed, a solved challenge signs in and the same
 * solution posted again is refused, as with Redis up. The Redis is a private server this test
 * kills; PostgreSQL is the run's own.
 */
let redis: RedisServer;
let porta: TestPorta;
let tenant: Tenant;
beforeAll(async () => {
  redis = await startPrivateRedis();
  porta = await startTestPorta({ env: { REDIS_URL: redis.url } });
  tenant = await createTenant(porta);
  await porta.services.db.prisma.organization.update({ where: { id: tenant.org.id }, data: { botChallenge: "always", botChallengeCost: 5_000 } });
}, 180_000);
afterAll(async () => {
  await porta?.stop();
  await redis?.stop();
}, 60_000);

function challengeOf(html: string): BotChallenge {
  const match = /<input[^>]*name="altcha"[^>]*data-challenge="([^"]*)"/.exec(mainOf(html));
  if (!match) throw new Error("the page has no challenge");
  return BotChallengeSchema.parse(JSON.parse(match[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&")));
}

async function solve(challenge: BotChallenge) {
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  return Buffer.from(JSON.stringify({ ...challenge, number: solution!.number })).toString("base64");
}

const post = (page: LoginPage, email: string, altcha: string) => page.browser.post(page.interactionUrl, { csrf: csrfOf(page.html), email, password: PASSWORD, altcha });

it("signs in with a solved challenge and refuses its replay while Redis is down", { timeout: 120_000 }, async () => {
  const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
  await redis.stop();
  const page = await openLoginPage(tenant);
  expect(page.res.status).toBe(200);
  const solution = await solve(challengeOf(page.html));
  expect([302, 303]).toContain((await post(page, user.email, solution)).status);
  const again = await openLoginPage(tenant, { extra: { prompt: "login" } });
  const replayed = await post(again, user.email, solution);
  expect(replayed.status).toBe(403);
  expect(mainOf(await replayed.text())).toContain(message("en", (m) => m.botChallenge.refused.replayed));
});
