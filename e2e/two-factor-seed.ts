import type { PrismaClient } from "~/generated/prisma/client";
import { createClient, createOrganization, createUser } from "../test/support/factories";
import { BASE_URL, RP_REDIRECT_URI, type SeededTwoFactorOrganization } from "./seed";

/**
 * The two-factor part of the end-to-end seed (e2e/two-factor.spec.ts): one organization whose
 * policy requires TOTP and one that requires emailed codes, each with a confidential web client
 * (which may also send the browser back after an RP-initiated logout) and a person with a password.
 */
export const RP_POST_LOGOUT_REDIRECT_URI = "https://rp.example.test/signed-out";
const PASSWORD = "a long e2e password 7";

const ORGANIZATIONS: Array<{ policy: SeededTwoFactorOrganization["policy"]; slug: string; name: string }> = [
  { policy: "required_totp", slug: "e2e-2fa-totp", name: "Authenticator Required AG" },
  { policy: "required_email", slug: "e2e-2fa-email", name: "Email Codes Required SA" },
];

export async function seedTwoFactorOrganizations(prisma: PrismaClient): Promise<SeededTwoFactorOrganization[]> {
  const seeded: SeededTwoFactorOrganization[] = [];
  for (const row of ORGANIZATIONS) {
    const org = await createOrganization(prisma, { slug: row.slug, name: row.name, defaultLoginMethods: ["password", "magic_link"] });
    await prisma.organization.update({ where: { id: org.id }, data: { twoFactorPolicy: row.policy } });
    const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_REDIRECT_URI], postLogoutRedirectUris: [RP_POST_LOGOUT_REDIRECT_URI] });
    const email = `person@${row.slug}.example.test`;
    const user = await createUser(prisma, org.id, { email, password: PASSWORD, givenName: "Erika", familyName: "Mustermann" });
    seeded.push({
      policy: row.policy,
      slug: org.slug,
      name: org.name,
      issuer: `${BASE_URL}/${org.slug}`,
      clientId: client.id,
      clientSecret: secret!.value,
      redirectUri: RP_REDIRECT_URI,
      postLogoutRedirectUri: RP_POST_LOGOUT_REDIRECT_URI,
      user: { email, password: PASSWORD, id: user.id },
    });
  }
  return seeded;
}
