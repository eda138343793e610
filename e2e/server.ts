/**
 * The Porta that Playwright's `webServer` runs for the end-to-end tests: the production build
 * on the embedded default (PGlite in a temporary DATA_DIR, in-memory store), on the fixed port
 * of e2e/seed.ts, seeded with one organization per row of the login-method matrix. The seed is
 * written as JSON to E2E_SEED_FILE once it is complete. Two organizations with a two-factor
 * policy are added (e2e/two-factor-seed.ts), and mail goes to a real SMTP peer started here that
 * keeps every message in the mailbox file the seed names (e2e/mail-peer.ts). An MCP client's
 * metadata document is served over TLS here, and this process trusts its certificate
 * (e2e/mcp-documents.ts). A company's SAML IdP answers on its own port (e2e/saml-idp.ts).
 *
 *   node --import tsx e2e/server.ts      (needs `npx remix vite:build` first)
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseConfig } from "~/.server/config/env";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { createLogger } from "~/.server/logging/logger";
import { startPorta } from "~/.server/start";
import { createClient, createOrganization, createUser } from "../test/support/factories";
import { BASE_URL, CONSOLE_ADMINS, E2E_ADMIN, E2E_PORT, MAILBOX_FILE, RP_REDIRECT_URI, SEED_FILE, type MatrixRow, type Seed, type SeededOrganization } from "./seed";
import { startMailPeer } from "./mail-peer";
import { seedInterop } from "./interop-seed";
import { startAgentDocuments } from "./mcp-documents";
import { MCP_CALLBACK, seedMcp } from "./mcp-seed";
import { COMPANY_DNS_URL, SAML_DOMAIN, SAML_IDP, SAML_PERSON, seedSaml, startSamlIdp } from "./saml-idp";
import { seedTwoFactorOrganizations } from "./two-factor-seed";
import { companyDns } from "./company-dns";
import { seedOrganizationAdmin } from "./organization-admin-seed";

const ROWS: Array<{ row: MatrixRow; methods: string[]; slug: string; name: string }> = [
  { row: "password+magic_link", methods: ["password", "magic_link"], slug: "e2e-both", name: "Both Methods Inc" },
  { row: "password", methods: ["password"], slug: "e2e-password", name: "Password Only Ltd" },
  { row: "magic_link", methods: ["magic_link"], slug: "e2e-magic", name: "Magic Link GmbH" },
];
const USER_PASSWORD = "a long e2e password 7";

async function main() {
  rmSync(SEED_FILE, { force: true });
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-e2e-"));
  // Mail goes to a real SMTP peer that keeps what it receives in MAILBOX_FILE (named in the seed).
  const mailPeer = await startMailPeer(MAILBOX_FILE);
  const agentDocuments = await startAgentDocuments(MCP_CALLBACK);
  // The SAML company's DNS: what its IT person enters there answers the domain proofs of e2e/setup-link.spec.ts.
  const dns = companyDns();
  const samlIdp = await startSamlIdp(dns.handle);
  const config = parseConfig({
    NODE_ENV: "production",
    PORT: String(E2E_PORT),
    BASE_URL,
    DATA_DIR: dataDir,
    ADMIN_BOOTSTRAP_EMAIL: E2E_ADMIN.email,
    ADMIN_BOOTSTRAP_PASSWORD: E2E_ADMIN.password,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    SMTP_HOST: mailPeer.host,
    SMTP_PORT: String(mailPeer.port),
    SMTP_FROM: "Porta E2E <no-reply@e2e.example.test>",
    // The federation spec's upstream identity provider is this same server on localhost.
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true",
  });
  const logger = createLogger(config.logLevel);
  const porta = await startPorta(config, logger, { host: "127.0.0.1", dnsResolver: dns.resolver });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    rmSync(SEED_FILE, { force: true });
    porta
      .close(2_000)
      .catch((error: unknown) => logger.error({ err: error }, "e2e server: close failed"))
      .finally(async () => {
        await mailPeer.close().catch(() => undefined);
        await agentDocuments.close().catch(() => undefined);
        await samlIdp.close().catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      });
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);

  const prisma = porta.services.db.prisma;
  const organizations: SeededOrganization[] = [];
  for (const row of ROWS) {
    const org = await createOrganization(prisma, { slug: row.slug, name: row.name, defaultLoginMethods: row.methods });
    const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_REDIRECT_URI] });
    const email = `person@${row.slug}.example.test`;
    const user = await createUser(prisma, org.id, { email, password: USER_PASSWORD, givenName: "Erika", familyName: "Mustermann" });
    organizations.push({
      row: row.row,
      methods: row.methods,
      slug: org.slug,
      name: org.name,
      issuer: `${BASE_URL}/${org.slug}`,
      clientId: client.id,
      clientSecret: secret!.value,
      redirectUri: RP_REDIRECT_URI,
      user: { email, password: USER_PASSWORD, id: user.id },
    });
  }
  const resetOrg = await prisma.organization.findUniqueOrThrow({ where: { slug: organizations.find((o) => o.row === "password+magic_link")!.slug } });
  const resetEmail = `forgetful@${resetOrg.slug}.example.test`;
  const resetUser = { email: resetEmail, password: USER_PASSWORD, id: (await createUser(prisma, resetOrg.id, { email: resetEmail, password: USER_PASSWORD })).id };
  const accountEmail = `self-service@${resetOrg.slug}.example.test`;
  const accountUser = { email: accountEmail, password: USER_PASSWORD, id: (await createUser(prisma, resetOrg.id, { email: accountEmail, password: USER_PASSWORD })).id };
  const emailChangeEmail = `moving@${resetOrg.slug}.example.test`;
  const emailChangeUser = { email: emailChangeEmail, password: USER_PASSWORD, id: (await createUser(prisma, resetOrg.id, { email: emailChangeEmail, password: USER_PASSWORD })).id };
  const twoFactor = await seedTwoFactorOrganizations(prisma);
  const superAdmins = await prisma.organization.findUniqueOrThrow({ where: { slug: config.superAdminSlug } });
  const serviceAdmin = await prisma.role.findFirstOrThrow({ where: { organizationId: superAdmins.id, name: "service-admin" } });
  for (const person of Object.values(CONSOLE_ADMINS)) {
    const user = await createUser(prisma, superAdmins.id, { ...person, givenName: "Console", familyName: "Admin" });
    await prisma.userRole.create({ data: { userId: user.id, roleId: serviceAdmin.id } });
  }
  const passkeyOrg = await createOrganization(prisma, { slug: "e2e-passkey", name: "Passkey Works AG", defaultLoginMethods: ["password", "passkey"] });
  const passkeyClient = async (loginMethods: string[]) => {
    const { client, secret } = await createClient(prisma, passkeyOrg.id, { redirectUris: [RP_REDIRECT_URI], loginMethods, skipConsent: true });
    return { issuer: `${BASE_URL}/${passkeyOrg.slug}`, clientId: client.id, clientSecret: secret!.value, redirectUri: RP_REDIRECT_URI };
  };
  const passkeyEmail = `passkey-person@${passkeyOrg.slug}.example.test`;
  const passkeys: Seed["passkeys"] = {
    slug: passkeyOrg.slug,
    user: { email: passkeyEmail, password: USER_PASSWORD, id: (await createUser(prisma, passkeyOrg.id, { email: passkeyEmail, password: USER_PASSWORD, givenName: "Pia", familyName: "Schlüssel" })).id },
    passkeyOnly: await passkeyClient(["passkey"]),
    passwordOnly: await passkeyClient(["password"]),
    secondFactor: await (async () => {
      const org = await prisma.organization.create({ data: { slug: "e2e-passkey-2fa", name: "Second Key GmbH", defaultLoginMethods: ["password"], twoFactorPolicy: "required_passkey" } });
      const email = `second-key@${org.slug}.example.test`;
      return { slug: org.slug, user: { email, password: USER_PASSWORD, id: (await createUser(prisma, org.id, { email, password: USER_PASSWORD })).id } };
    })(),
  };
  const federation = await seedFederation(prisma);
  const interop = await seedInterop(prisma, BASE_URL);
  const mcp = { ...(await seedMcp(prisma, BASE_URL)), agentDocument: { url: agentDocuments.url, certificate: agentDocuments.certificate } };
  const saml = await seedSaml(prisma, samlIdp.certificate);
  const setupLinks: Seed["setupLinks"] = { admin: CONSOLE_ADMINS.setupLinks, dnsConsole: COMPANY_DNS_URL, idp: { ...SAML_IDP, certificate: samlIdp.certificate, domain: SAML_DOMAIN, person: SAML_PERSON } };
  const organizationAdmin = await seedOrganizationAdmin(porta.services);
  const botChallenge: Seed["botChallenge"] = await (async () => {
    const org = await prisma.organization.create({ data: { slug: "e2e-bot-challenge", name: "Proof of Work KG", defaultLoginMethods: ["password", "magic_link"], botChallenge: "always", botChallengeCost: 20_000 } });
    const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_REDIRECT_URI], skipConsent: true });
    // A command-line tool: the device-code entry page carries the proof of work too.
    const device = await createClient(prisma, org.id, { confidential: false, grantTypes: [DEVICE_CODE_GRANT], redirectUris: [], scope: "openid" });
    const email = `worker@${org.slug}.example.test`;
    return {
      slug: org.slug,
      deviceClientId: device.client.id,
      user: { email, password: USER_PASSWORD, id: (await createUser(prisma, org.id, { email, password: USER_PASSWORD })).id },
      rp: { issuer: `${BASE_URL}/${org.slug}`, clientId: client.id, clientSecret: secret!.value, redirectUri: RP_REDIRECT_URI },
    };
  })();
  const seed: Seed = { baseUrl: BASE_URL, admin: E2E_ADMIN, organizations, twoFactor, mailbox: MAILBOX_FILE, resetUser, accountUser, emailChangeUser, passkeys, federation, interop, mcp, saml, setupLinks, organizationAdmin, botChallenge };
  // Written whole, then renamed: a reader never sees half a file.
  writeFileSync(`${SEED_FILE}.tmp`, JSON.stringify(seed, null, 2), { mode: 0o600 });
  renameSync(`${SEED_FILE}.tmp`, SEED_FILE);
  process.stdout.write(`e2e Porta at ${BASE_URL}, seed in ${SEED_FILE}\n`);
}

/** An organization whose people sign in through another Porta organization (e2e/federation.spec.ts). */
async function seedFederation(prisma: Parameters<typeof createOrganization>[0]): Promise<NonNullable<Seed["federation"]>> {
  const upstream = await createOrganization(prisma, { slug: "e2e-idp", name: "Corp Identity", defaultLoginMethods: ["password"] });
  const org = await createOrganization(prisma, { slug: "e2e-sso", name: "Single Sign-On KG", defaultLoginMethods: ["password", "federated"] });
  // A public upstream client (PKCE, no secret), so the seed stores no encrypted value.
  const { client: upstreamClient } = await createClient(prisma, upstream.id, { redirectUris: [`${BASE_URL}/${org.slug}/federation/callback`], skipConsent: true, confidential: false });
  const domain = "sso-corp.example.test";
  const providerName = "Corp Identity";
  await prisma.identityProvider.create({
    data: {
      id: randomUUID(),
      organizationId: org.id,
      name: providerName,
      issuer: `${BASE_URL}/${upstream.slug}`,
      clientId: upstreamClient.id,
      clientSecretEncrypted: null,
      domains: [domain],
      createAccounts: true,
    },
  });
  const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_REDIRECT_URI], skipConsent: true });
  const email = `worker@${domain}`;
  const user = await createUser(prisma, upstream.id, { email, password: USER_PASSWORD, givenName: "Jana", familyName: "Föderiert" });
  return {
    slug: org.slug,
    upstreamSlug: upstream.slug,
    providerName,
    domain,
    user: { email, password: USER_PASSWORD, id: user.id },
    rp: { issuer: `${BASE_URL}/${org.slug}`, clientId: client.id, clientSecret: secret!.value, redirectUri: RP_REDIRECT_URI },
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`e2e server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
