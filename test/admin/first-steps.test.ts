import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createApplication, createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, signIn, unique } from "./helpers";

/**
 * The dashboard's checklist to a first app reads `firstSteps` of GET /stats/overview: on a fresh
 * server only the super-admin organization exists, and each step turns true as the operator
 * does it; the administrator's own console sign-in does not count as the first app's.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const stepsNow = async () => {
  const res = await api.get<{ firstSteps: Record<string, unknown> }>("/stats/overview");
  expect(res.status).toBe(200);
  return res.body.firstSteps;
};

it("starts empty beside the super-admin organization and follows the operator to a first sign-in", async () => {
  expect(await stepsNow()).toEqual({ organizationId: null, application: false, client: false, user: false, signIn: false });

  const prisma = porta.services.db.prisma;
  // createTenant makes the organization and a client of it; the application comes after.
  const tenant = await createTenant(porta);
  expect(await stepsNow()).toEqual({ organizationId: tenant.org.id, application: false, client: true, user: false, signIn: false });
  await createApplication(prisma, tenant.org.id);
  const person = await createUser(prisma, tenant.org.id, { email: `${unique("first")}@example.com`, password: PASSWORD });
  expect(await stepsNow()).toEqual({ organizationId: tenant.org.id, application: true, client: true, user: true, signIn: false });

  await signIn(tenant, { email: person.email, password: PASSWORD });
  expect(await stepsNow()).toEqual({ organizationId: tenant.org.id, application: true, client: true, user: true, signIn: true });
});

it("points at the newest organization that is not deleted", async () => {
  const prisma = porta.services.db.prisma;
  const newer = await prisma.organization.create({ data: { slug: unique("newer"), name: "Newer" } });
  expect((await stepsNow()).organizationId).toBe(newer.id);
  await prisma.organization.update({ where: { id: newer.id }, data: { status: "deleted" } });
  expect((await stepsNow()).organizationId).not.toBe(newer.id);
});
