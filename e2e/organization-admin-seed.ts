import { beginTotpEnrollment, confirmTotpEnrollment } from "~/.server/auth/two-factor/service";
import { currentTotpCode } from "~/.server/auth/two-factor/totp";
import { systemActor } from "~/.server/auth/actors";
import { stagedContext, type ContextSource } from "~/.server/context";
import { createOrganization, createUser, giveRole } from "../test/support/factories";
import type { Seed } from "./seed";

/**
 * The organization-administration part of the end-to-end seed (e2e/organization-console.spec.ts,
 * decision 090): an organization whose administrator holds `org-admin` and has an authenticator
 * app (its key is in the seed, so the browser test can make codes), and a colleague of theirs.
 */
const PASSWORD = "a long e2e password 9";

export async function seedOrganizationAdmin(services: ContextSource): Promise<NonNullable<Seed["organizationAdmin"]>> {
  const prisma = services.db.prisma;
  const org = await createOrganization(prisma, { slug: "e2e-org-admin", name: "Self Service GmbH", defaultLoginMethods: ["password"] });
  const email = "admin@e2e-org-admin.example.test";
  const admin = await createUser(prisma, org.id, { email, password: PASSWORD, givenName: "Olga", familyName: "Admin" });
  // Organizations written straight to the database get their roles here, as a new one gets them from the Admin API.
  await giveRole(prisma, org.id, admin.id, "org-admin");
  await prisma.role.upsert({ where: { organizationId_name: { organizationId: org.id, name: "org-auditor" } }, create: { organizationId: org.id, name: "org-auditor" }, update: {} });
  const ctx = stagedContext(services, systemActor(null));
  const totpSecret = await beginTotpEnrollment(ctx, admin.id);
  if (!(await confirmTotpEnrollment(ctx, admin.id, currentTotpCode(totpSecret)))) throw new Error("the seed's TOTP enrollment was not confirmed");
  const colleague = await createUser(prisma, org.id, { email: "colleague@e2e-org-admin.example.test", password: PASSWORD, givenName: "Carl", familyName: "Kollege" });
  return { slug: org.slug, admin: { email, password: PASSWORD, id: admin.id, totpSecret }, colleague: { email: colleague.email, id: colleague.id } };
}
