import { createClient, createUser } from "../test/support/factories";
import type { Seed } from "./seed";

type Prisma = Parameters<typeof createClient>[0];

/** Where each relying party of e2e/interop.spec.ts listens (fixed: the clients are registered before the specs start). */
export const INTEROP_PORTS = { expressOpenidConnect: 3951, authjs: 3952, oidcClientTs: 3953, passport: 3954 } as const;
const origin = (port: number) => `http://localhost:${port}`;

/**
 * The interop organization: new-organization defaults (OAuth 2.1 mode, so PKCE from every client),
 * password sign-in, and one client per relying-party library, registered with what
 * docs/integrations.md tells its user to register and nothing else.
 */
export async function seedInterop(prisma: Prisma, baseUrl: string): Promise<NonNullable<Seed["interop"]>> {
  const org = await prisma.organization.create({ data: { slug: "e2e-interop", name: "Interop Werkstatt", defaultLoginMethods: ["password"], oauth21: true } });
  const user = await createUser(prisma, org.id, { email: "dev@interop.example.test", password: "an interop e2e password 4", givenName: "Ada", familyName: "Interop", emailVerified: true });
  const eoc = origin(INTEROP_PORTS.expressOpenidConnect);
  const expressOpenidConnect = await createClient(prisma, org.id, { redirectUris: [`${eoc}/callback`], postLogoutRedirectUris: [eoc, `${eoc}/`] });
  const auth = origin(INTEROP_PORTS.authjs);
  const authjs = await createClient(prisma, org.id, { redirectUris: [`${auth}/auth/callback/porta`] });
  const spa = origin(INTEROP_PORTS.oidcClientTs);
  const oidcClientTs = await createClient(prisma, org.id, {
    confidential: false,
    redirectUris: [`${spa}/callback.html`],
    postLogoutRedirectUris: [`${spa}/`],
    allowedCorsOrigins: [spa],
  });
  const pp = origin(INTEROP_PORTS.passport);
  // passport-openidconnect cannot send PKCE: its client is exempt, as docs/integrations.md says.
  const passport = await createClient(prisma, org.id, { redirectUris: [`${pp}/callback`], pkce: "not_required" });
  const secretOf = (c: { secret?: { value: string } }) => c.secret!.value;
  return {
    issuer: `${baseUrl}/${org.slug}`,
    user: { email: user.email, password: "an interop e2e password 4", id: user.id },
    clients: {
      expressOpenidConnect: { clientId: expressOpenidConnect.client.id, clientSecret: secretOf(expressOpenidConnect) },
      authjs: { clientId: authjs.client.id, clientSecret: secretOf(authjs) },
      oidcClientTs: { clientId: oidcClientTs.client.id, clientSecret: "" },
      passport: { clientId: passport.client.id, clientSecret: secretOf(passport) },
    },
  };
}
