import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, unique, type Tenant } from "../admin/helpers";
import { expectScimError, issueScimToken, patch, scimClient, USER_SCHEMA, type ScimClient } from "./support";

/**
 * A SCIM write and its audit entry commit together (decision 084): a fault injected between
 * them (context.ts's test-only hook) leaves neither the user nor a deactivation behind.
 */
let failNext = false;
let porta: TestPorta;
let tenant: Tenant;
let scim: ScimClient;

beforeAll(async () => {
  porta = await startTestPorta({
    faults: {
      beforeAudit: () => {
        if (!failNext) return;
        failNext = false;
        throw new Error("injected fault between the SCIM write and its audit entry");
      },
    },
  });
  const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
  scim = scimClient(porta, tenant.org.slug, (await issueScimToken(api, tenant.org.id)).token);
});
afterAll(async () => {
  await porta?.stop();
});

describe("a SCIM write and its audit entry", () => {
  it("leave nothing behind when the process fails between them", async () => {
    const prisma = porta.services.db.prisma;
    const email = `${unique("half")}@example.com`;
    failNext = true;
    porta.logs.expectError("injected fault between the SCIM write");
    const failed = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email });
    expectScimError(failed, 500);
    expect(String(failed.body.detail)).not.toContain("injected");
    expect(await prisma.user.count({ where: { organizationId: tenant.org.id, email } })).toBe(0);

    const user = await createUser(prisma, tenant.org.id, { email: `${unique("stay")}@example.com` });
    failNext = true;
    porta.logs.expectError("injected fault between the SCIM write");
    expect((await scim.send("PATCH", `/Users/${user.id}`, patch({ op: "replace", path: "active", value: false }))).status).toBe(500);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).status).toBe("active");
    expect(await prisma.auditEntry.count({ where: { targetId: user.id } })).toBe(0);
  });

  it("are both there when nothing fails", async () => {
    const email = `${unique("whole")}@example.com`;
    const res = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: email });
    expect(res.status).toBe(201);
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: "user.created", targetId: res.body.id as string, actorType: "scim_token" } })).toBe(1);
  });
});
