import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, mainOf, message, openLoginPage, PASSWORD, passwordLoginToCallback, submitPassword, type Tenant } from "../login/helpers";
import { expectError } from "./helpers";

/**
 * Lockouts as an administrator handles them (decision 040): a user locked by strangers' wrong
 * passwords shows `lockedUntil`, the list filters the locked users, and Unlock (audited, in
 * both path shapes) lets the owner sign in again at once, also when the strangers used up the
 * account's password limit while it was locked.
 */
interface User {
  id: string;
  email: string;
  lockedUntil: string | null;
}
interface Page<T> {
  data: T[];
}

let porta: TestPorta;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;
beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const SLOW = { timeout: 180_000 };
const WRONG = "a wrong password 9";
let addressCount = 0;
const newAddress = () => `198.51.100.${++addressCount}`;

/** One password attempt on a fresh login page, from a fresh browser at `ip`. */
async function attempt(email: string, password: string, ip: string) {
  const headers = { "x-forwarded-for": ip };
  const page = await openLoginPage(tenant, { browser: new TestBrowser(headers), extra: { prompt: "login" } });
  return submitPassword(page, email, password, { headers });
}

async function expectRefused(res: Response) {
  expect(res.status).toBe(401);
  expect(mainOf(await res.text())).toContain(message("en", (m) => m.signIn.failed));
}

/** Locks the account the way an attacker does: five wrong passwords (the default lockout), then more. */
async function lockOut(email: string, extraAttempts = 0) {
  const attacker = newAddress();
  for (let i = 0; i < 5 + extraAttempts; i++) await (await attempt(email, WRONG, attacker)).arrayBuffer();
}

const usersPath = "/organizations/";

describe("lockouts and unlock", () => {
  it("a locked user shows lockedUntil, is listed by locked=true, and signs in again once unlocked (audited)", SLOW, async () => {
    const locked = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    const free = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    await lockOut(locked.email);
    await expectRefused(await attempt(locked.email, PASSWORD, newAddress()));

    const base = `${usersPath}${tenant.org.id}/users`;
    const shown = await api.get<User>(`${base}/${locked.id}`);
    expect(shown.status).toBe(200);
    expect(Date.parse(shown.body.lockedUntil!)).toBeGreaterThan(Date.now());

    const lockedList = await api.get<Page<User>>(`${base}?locked=true&limit=100`);
    expect(lockedList.status).toBe(200);
    expect(lockedList.body.data.map((u) => u.email)).toEqual([locked.email]);
    const everyone = await api.get<Page<User>>(`${base}?limit=100`);
    expect(everyone.body.data.map((u) => u.email).sort()).toEqual([locked.email, free.email].sort());
    expectError(await api.get(`${base}?locked=yes`), 422, "validation_failed");

    const unlocked = await api.post<User>(`${base}/${locked.id}/unlock`);
    expect(unlocked.status).toBe(200);
    expect(unlocked.body.lockedUntil).toBeNull();
    expect((await api.get<Page<User>>(`${base}?locked=true`)).body.data).toEqual([]);

    const entries = await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: locked.id, eventType: "user.unlocked" } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorType: "admin", targetType: "user", organizationId: tenant.org.id, data: { change: { lockedUntil: null, failedLoginCount: 0 } } });

    // The owner signs in with the right password, from anywhere.
    const page = await openLoginPage(tenant, { browser: new TestBrowser({ "x-forwarded-for": newAddress() }) });
    const { callback } = await passwordLoginToCallback(page, locked.email, PASSWORD, tenant.redirectUri);
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("unlock by id also clears the account's password limit that attempts during the lock used up", SLOW, async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    // Five to lock, five more while locked: the per-account limit (10 per 15 minutes) is used up.
    await lockOut(user.email, 5);
    const limited = await attempt(user.email, PASSWORD, newAddress());
    expect(limited.status).toBe(429);
    await limited.arrayBuffer();

    const unlocked = await api.post<User>(`/users/${user.id}/unlock`);
    expect(unlocked.status).toBe(200);
    expect(unlocked.body.lockedUntil).toBeNull();
    const page = await openLoginPage(tenant, { browser: new TestBrowser({ "x-forwarded-for": newAddress() }) });
    const { callback } = await passwordLoginToCallback(page, user.email, PASSWORD, tenant.redirectUri);
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(await porta.services.db.prisma.auditEntry.count({ where: { targetId: user.id, eventType: "user.unlocked" } })).toBe(1);
  });

  it("unlock honours If-Match and answers 404 for a user of another organization", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    expectError(await api.post(`/users/${user.id}/unlock`, undefined, { "if-match": '"v99"' }), 409, "etag_mismatch");
    const other = await createTenant(porta);
    expectError(await api.post(`${usersPath}${other.org.id}/users/${user.id}/unlock`), 404, "not_found");
  });
});
