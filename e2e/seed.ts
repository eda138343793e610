import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * What e2e/server.ts seeds and the specs read: one organization per row of the login-method
 * matrix, each with a confidential web client and a user with a known password.
 */
export const E2E_PORT = Number(process.env.E2E_PORT ?? 3917);
export const BASE_URL = `http://localhost:${E2E_PORT}`;
/** Outside test-results/, which Playwright empties when a run starts. */
export const SEED_FILE = process.env.E2E_SEED_FILE ?? path.join(tmpdir(), `porta-e2e-seed-${E2E_PORT}.json`);
export const RP_REDIRECT_URI = "https://rp.example.test/cb";

export type MatrixRow = "password+magic_link" | "password" | "magic_link";

export interface SeededOrganization {
  row: MatrixRow;
  methods: string[];
  slug: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  user: { email: string; password: string; id: string };
}

export interface Seed {
  baseUrl: string;
  /** The bootstrap service-admin of the super-admin organization (the console's person). */
  admin: { email: string; password: string };
  organizations: SeededOrganization[];
  /** Organizations with a two-factor policy (e2e/two-factor-seed.ts). */
  twoFactor?: SeededTwoFactorOrganization[];
  /** The JSON file where the server's SMTP peer keeps every message it received (e2e/mail-peer.ts). */
  mailbox?: string;
  /** A person of the `password+magic_link` organization whose password the reset journey changes (nobody else signs in as them). */
  resetUser?: { email: string; password: string; id: string };
  /** A person of the same organization who manages their own account (account.spec.ts; nobody else signs in as them). */
  accountUser?: { email: string; password: string; id: string };
  /** Changes their own email address on the account page (e2e/account.spec.ts). */
  emailChangeUser?: { email: string; password: string; id: string };
  /**
   * The passkey organization (passkeys.spec.ts): its default methods are password and passkey;
   * `passkeyOnly` is a client whose methods are `[passkey]`, `passwordOnly` one without it.
   */
  passkeys?: {
    slug: string;
    user: { email: string; password: string; id: string };
    passkeyOnly: Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;
    passwordOnly: Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;
    /** An organization whose policy is `required_passkey`, and its person without a passkey yet. */
    secondFactor: { slug: string; user: { email: string; password: string; id: string } };
  };
  /**
   * Enterprise SSO (federation.spec.ts, decision 046): `slug` signs its people in through an
   * upstream Porta organization (`upstreamSlug`) that claims `domain`; `user` is a person of the
   * upstream only (the first sign-in creates their account here).
   */
  federation?: {
    slug: string;
    upstreamSlug: string;
    providerName: string;
    domain: string;
    user: { email: string; password: string; id: string };
    rp: Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;
  };
  /**
   * SAML sign-in (e2e/saml.spec.ts, e2e/saml-idp.ts): `slug` signs its people in through a SAML
   * IdP run by the harness; `person` exists only there, and members of its engineering group get `role`.
   */
  saml?: {
    slug: string;
    providerName: string;
    person: { email: string; givenName: string; familyName: string };
    role: string;
    rp: Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;
  };
  /**
   * Setup links (e2e/setup-link.spec.ts, decision 089): the service admin who creates one, and what
   * the customer's IT person knows of their SAML IdP (e2e/saml-idp.ts), their domain and person.
   */
  setupLinks?: {
    admin: { email: string; password: string };
    /** Where the company's IT person enters a DNS record (e2e/company-dns.ts). */
    dnsConsole: string;
    idp: { entityId: string; ssoUrl: string; certificate: string; domain: string; person: { nameId: string; email: string; givenName: string; familyName: string } };
  };
  /** An organization administering itself (e2e/organization-console.spec.ts, e2e/organization-admin-seed.ts): its `org-admin` with an authenticator app, and a colleague. */
  organizationAdmin?: {
    slug: string;
    admin: { email: string; password: string; id: string; totpSecret: string };
    colleague: { email: string; id: string };
  };
  /** An organization whose bot protection is `always` (e2e/bot-challenge.spec.ts, decision 091), its person and a client. */
  botChallenge?: {
    slug: string;
    /** A public client with the device authorization grant (RFC 8628). */
    deviceClientId: string;
    user: { email: string; password: string; id: string };
    rp: Pick<SeededOrganization, "issuer" | "clientId" | "clientSecret" | "redirectUri">;
  };
  /** Off-the-shelf relying parties (e2e/interop.spec.ts, e2e/interop-seed.ts): one client per library. */
  interop?: {
    issuer: string;
    user: { email: string; password: string; id: string };
    clients: Record<"expressOpenidConnect" | "authjs" | "oidcClientTs" | "passport", { clientId: string; clientSecret: string }>;
  };
  /** An MCP server protected by Porta (e2e/mcp.spec.ts, e2e/mcp-seed.ts): open registration and metadata documents, the MCP resource open to such clients. */
  mcp?: {
    issuer: string;
    user: { email: string; password: string; id: string };
    /** A client_credentials client granted another resource of the organization. */
    otherResourceClient: { clientId: string; clientSecret: string };
    /** The second MCP client's metadata document (e2e/mcp-documents.ts): its URL, and the self-signed certificate it is served with. */
    agentDocument?: { url: string; certificate: string };
  };
}

/**
 * Reads the seed. The server answers /health (Playwright's readiness check) a moment before
 * it has written the seed, so this waits for the file.
 */
export async function readSeed(timeoutMs = 30_000): Promise<Seed> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(SEED_FILE)) {
    if (Date.now() > deadline) throw new Error(`no seed at ${SEED_FILE}: did e2e/server.ts start?`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return JSON.parse(readFileSync(SEED_FILE, "utf8")) as Seed;
}

/** The SMTP peer's mailbox file, beside the seed. */
export const MAILBOX_FILE = process.env.E2E_MAILBOX_FILE ?? SEED_FILE.replace(/\.json$/, "") + "-mailbox.json";

/** An organization whose 2FA policy requires a second factor after the password. */
export interface SeededTwoFactorOrganization extends Omit<SeededOrganization, "row" | "methods"> {
  policy: "required_totp" | "required_email";
  postLogoutRedirectUri: string;
}

/** The bootstrap service-admin of the e2e server (the CLI login spec signs in as it). */
export const E2E_ADMIN = { email: "admin@e2e.example.test", password: "an e2e admin password 1" };

/**
 * More service-admins, one for each console spec beside console.spec.ts: the login rate limit
 * counts per account (10 per 15 minutes), and one admin signing in for every spec would meet it.
 */
export const CONSOLE_ADMINS = {
  clients: { email: "clients-admin@e2e.example.test", password: "an e2e admin password 2" },
  users: { email: "users-admin@e2e.example.test", password: "an e2e admin password 3" },
  overview: { email: "overview-admin@e2e.example.test", password: "an e2e admin password 4" },
  /** An address on a single-label domain, like the admin@localhost that a first `npm start` prints. */
  devices: { email: "ops@localhost", password: "an e2e admin password 5" },
  integration: { email: "integration-admin@e2e.example.test", password: "an e2e admin password 6" },
  audit: { email: "audit-admin@e2e.example.test", password: "an e2e admin password 7" },
  lockouts: { email: "lockouts-admin@e2e.example.test", password: "an e2e admin password 7" },
  layout: { email: "layout-admin@e2e.example.test", password: "an e2e admin password 8" },
  webhooks: { email: "webhooks-admin@e2e.example.test", password: "an e2e admin password 9" },
  agents: { email: "agents-admin@e2e.example.test", password: "an e2e admin password 10" },
  setupLinks: { email: "setup-links-admin@e2e.example.test", password: "an e2e admin password 11" },
} as const;
