import { describe, expect, it } from "vitest";
import { UsageError } from "../config";
import { exportOrganization } from "./export";
import { parseConfig } from "./load";
import { planOrganization } from "./plan";
import { renderPlan } from "./render";
import type { OrganizationConfig } from "./schema";
import type { LiveClient, LiveIdentityProvider, OrganizationState } from "./state";

const NOW = "2026-12-03T00:00:00.000Z";

function liveClient(over: Partial<LiveClient> = {}): { data: LiveClient; etag: string } {
  return {
    etag: '"c1"',
    data: {
      id: "client-1",
      organizationId: "org-1",
      applicationId: "app-1",
      name: "Web",
      clientType: "confidential",
      applicationType: "web",
      tokenEndpointAuthMethod: "client_secret_basic",
      jwks: null,
      jwksUri: null,
      redirectUris: ["https://a.example/cb", "https://b.example/cb"],
      postLogoutRedirectUris: [],
      grantTypes: ["authorization_code", "refresh_token"],
      scope: "openid profile email",
      loginMethods: null,
      effectiveLoginMethods: ["password"],
      adminApiAccess: false,
      allowedCorsOrigins: [],
      skipConsent: false,
      pkce: "inherit",
      accessTokenTtlSeconds: null,
      refreshTokenTtlSeconds: null,
      backchannelLogoutUri: null,
      backchannelLogoutSessionRequired: false,
      tokenExchangeAudiences: [],
      initiateLoginUri: null,
      status: "active",
      dynamicallyRegistered: false,
      createdAt: NOW,
      updatedAt: NOW,
      ...over,
    },
  };
}

function liveProvider(over: Partial<LiveIdentityProvider> = {}): { data: LiveIdentityProvider; etag: string } {
  return {
    etag: '"p1"',
    data: {
      id: "idp-1",
      organizationId: "org-1",
      name: "Google",
      kind: "google",
      issuer: "https://accounts.google.com",
      clientId: "google-client",
      hasClientSecret: true,
      scopes: ["openid", "email", "profile"],
      claimMapping: {},
      domains: [],
      enabled: true,
      createAccounts: true,
      trustUpstreamMfa: "when_asserted",
      endpoints: null,
      teamId: null,
      keyId: null,
      callbackUrl: "https://porta.example/acme/federated/callback",
      tokenEndpointAuthMethod: "auto",
      jwksUrl: null,
      assumeVerifiedEmails: false,
      saml: null,
      createdAt: NOW,
      updatedAt: NOW,
      ...over,
    },
  };
}

function state(): OrganizationState {
  return {
    organization: {
      etag: '"o1"',
      data: {
        id: "org-1",
        name: "Acme",
        slug: "acme",
        status: "active",
        defaultLoginMethods: ["password", "passkey"],
        twoFactorPolicy: "optional",
        defaultLocale: "en",
        oauth21: false,
        botChallenge: "off",
        botChallengeCost: 50_000,
        createdAt: NOW,
        updatedAt: NOW,
      },
    },
    branding: { etag: '"b1"', data: { organizationId: "org-1", displayName: "Acme", primaryColor: "#112233", backgroundColor: null, textColor: null, footerText: null, logo: null, favicon: null } },
    permissions: [
      { id: "perm-1", organizationId: "org-1", name: "invoices:read", description: null, createdAt: NOW },
      { id: "perm-2", organizationId: "org-1", name: "invoices:write", description: "Write invoices", createdAt: NOW },
    ],
    roles: [
      {
        etag: '"r1"',
        data: { id: "role-1", organizationId: "org-1", name: "Accountant", description: null, permissions: [{ id: "perm-2", name: "invoices:write" }, { id: "perm-1", name: "invoices:read" }], builtIn: false, createdAt: NOW, updatedAt: NOW },
      },
    ],
    applications: [
      {
        etag: '"a1"',
        data: { id: "app-1", organizationId: "org-1", name: "Portal", description: null, status: "active", createdAt: NOW, updatedAt: NOW },
        claims: [{ id: "claim-1", applicationId: "app-1", claimName: "tier", claimType: "string", scope: "profile", description: null, createdAt: NOW, updatedAt: NOW }],
      },
    ],
    clients: [liveClient()],
    identityProviders: [liveProvider()],
    webhooks: [
      {
        etag: '"w1"',
        data: { id: "hook-1", organizationId: "org-1", url: "https://hooks.example/porta", description: "", eventTypes: ["user.created", "user.deleted"], enabled: true, consecutiveFailures: 0, disabledReason: null, createdAt: NOW, updatedAt: NOW },
      },
    ],
    unmanaged: { samlConnections: [], registeredClients: [] },
  };
}

const SECRETS = new Map([["PORTA_ACME_GOOGLE_CLIENT_SECRET", "s3cret-value"]]);

describe("planOrganization", () => {
  it("plans nothing for a file exported from the same state (apply twice changes nothing)", () => {
    const current = state();
    const plan = planOrganization(exportOrganization(current), current, SECRETS);
    expect(plan).toEqual({ changes: [], prunable: [], warnings: [], problems: [] });
  });

  it("plans every entity of an organization the server does not have as a creation, in the file's words", () => {
    const desired = exportOrganization(state());
    const plan = planOrganization(desired, undefined, SECRETS);
    expect(plan.changes.map((c) => `${c.action} ${c.kind} ${c.key}`)).toEqual([
      "create organization acme",
      "update branding acme",
      "create permission invoices:read",
      "create permission invoices:write",
      "create role Accountant",
      "create application Portal",
      "create claim Portal › tier",
      "create client Web",
      "create identityProvider Google",
      "create webhook https://hooks.example/porta",
    ]);
    // The branding's unset fields are what a new organization has already.
    expect(plan.changes[1]!.fields.map((f) => f.field)).toEqual(["displayName", "primaryColor"]);
    // A secret is shown as the variable it comes from, never as its value.
    const provider = plan.changes.find((c) => c.kind === "identityProvider")!;
    expect(provider.fields).toContainEqual({ field: "clientSecret", from: null, to: "$PORTA_ACME_GOOGLE_CLIENT_SECRET" });
    expect(JSON.stringify(plan)).not.toContain("s3cret-value");
  });

  it("shows each changed field with its old and new value, and carries the ETag it read", () => {
    const desired: OrganizationConfig = {
      slug: "acme",
      name: "Acme Inc",
      twoFactorPolicy: "required_totp",
      // Same sets in another order: not a change.
      defaultLoginMethods: ["passkey", "password"],
      clients: [{ name: "Web", clientType: "confidential", redirectUris: ["https://b.example/cb", "https://a.example/cb"], scope: "email openid profile", loginMethods: ["password"], status: "inactive" }],
    };
    const plan = planOrganization(desired, state());
    expect(plan.changes).toEqual([
      {
        action: "update",
        kind: "organization",
        organization: "acme",
        key: "acme",
        id: "org-1",
        etag: '"o1"',
        fields: [
          { field: "name", from: "Acme", to: "Acme Inc" },
          { field: "twoFactorPolicy", from: "optional", to: "required_totp" },
        ],
        desired: { slug: "acme", name: "Acme Inc", twoFactorPolicy: "required_totp", defaultLoginMethods: ["passkey", "password"] },
      },
      expect.objectContaining({
        action: "update",
        kind: "client",
        key: "Web",
        id: "client-1",
        etag: '"c1"',
        fields: [
          { field: "loginMethods", from: null, to: ["password"] },
          { field: "status", from: "active", to: "inactive" },
        ],
      }),
    ]);
    expect(renderPlan([{ slug: "acme", plan }], false)).toContain('name: "Acme" → "Acme Inc"');
  });

  it("deletes nothing without --prune but lists what prune would delete; kinds the file leaves out are not managed", () => {
    const desired: OrganizationConfig = { slug: "acme", clients: [], webhooks: [], roles: [], applications: [{ name: "Portal", claims: [] }] };
    const plan = planOrganization(desired, state());
    expect(plan.changes).toEqual([]);
    expect(plan.prunable.map((c) => `${c.kind} ${c.key} ${c.id}`)).toEqual(["claim Portal › tier claim-1", "client Web client-1", "webhook https://hooks.example/porta hook-1"]);
    expect(plan.warnings).toEqual([expect.stringContaining('role "Accountant" is not in the file; the Admin API cannot delete roles')]);
    const text = renderPlan([{ slug: "acme", plan }], false);
    expect(text).toContain("--prune would delete them");
    expect(text).toContain("Plan: 0 to create, 0 to update, 0 to delete.");
    expect(renderPlan([{ slug: "acme", plan }], true)).toContain("Plan: 0 to create, 0 to update, 3 to delete.");
  });

  it("says what prune leaves because the file cannot describe it (SAML connections, self-registered clients)", () => {
    const current = state();
    current.unmanaged = { samlConnections: ["Corp SAML"], registeredClients: ["MCP agent"] };
    const plan = planOrganization({ slug: "acme", identityProviders: [], clients: [] }, current);
    expect(plan.prunable.map((c) => `${c.kind} ${c.key}`)).toEqual(["client Web", "identityProvider Google"]);
    expect(plan.warnings).toEqual([
      'acme: SAML connections are not part of the file and stay as they are: "Corp SAML".',
      'acme: self-registered clients manage themselves and stay as they are: "MCP agent".',
    ]);
    // Kinds the file does not manage say nothing.
    expect(planOrganization({ slug: "acme" }, current).warnings).toEqual([]);
  });

  it("names a role's permission or a client's application the organization would not have (not on the server, or dropped by a file that manages the kind)", () => {
    const desired: OrganizationConfig = {
      slug: "acme",
      roles: [{ name: "Auditor", permissions: ["audit:read"] }],
      clients: [{ name: "Cli", clientType: "public", application: "Nowhere" }],
    };
    const plan = planOrganization(desired, state());
    expect(plan.problems).toEqual([
      'acme: role "Auditor" names the permission "audit:read", which the organization would not have.',
      'acme: client "Cli" names the application "Nowhere", which the organization would not have.',
    ]);
    // The server has invoices:read, but a file that lists permissions without it would prune it.
    const managed = planOrganization({ slug: "acme", permissions: [{ name: "invoices:write" }], roles: [{ name: "Reader", permissions: ["invoices:read"] }] }, state());
    expect(managed.problems).toEqual(['acme: role "Reader" names the permission "invoices:read", which the organization would not have.']);
  });

  it("sets a provider's secret only when it has none, and says what the API cannot change", () => {
    const current = state();
    current.identityProviders = [liveProvider({ hasClientSecret: false })];
    const desired: OrganizationConfig = {
      slug: "acme",
      identityProviders: [{ name: "Google", kind: "google", clientSecret: { fromEnv: "PORTA_ACME_GOOGLE_CLIENT_SECRET" } }],
      permissions: [{ name: "invoices:read", description: "Read invoices" }],
      clients: [{ name: "Web", clientType: "public" }],
    };
    const plan = planOrganization(desired, current, SECRETS);
    expect(plan.changes).toEqual([expect.objectContaining({ kind: "identityProvider", fields: [{ field: "clientSecret", from: null, to: "$PORTA_ACME_GOOGLE_CLIENT_SECRET" }] })]);
    expect(plan.warnings).toEqual([expect.stringContaining("cannot change a permission's description"), expect.stringContaining("a client's type is fixed at creation")]);
    // With a secret already set, the same file changes nothing (a secret cannot be read back to compare).
    expect(planOrganization(desired, state(), SECRETS).changes).toEqual([]);
  });
});

describe("parseConfig", () => {
  const FILE = `# yaml-language-server: $schema=./porta-config.schema.json
version: 1
organizations:
  - slug: acme
    identityProviders:
      - name: Google
        kind: google
        clientId: abc
        clientSecret: { fromEnv: ACME_GOOGLE_SECRET }
`;

  it("reads secrets from the environment variables the file names", () => {
    const loaded = parseConfig(FILE, "porta.yaml", { ACME_GOOGLE_SECRET: "from-env" });
    expect(loaded.secrets.get("ACME_GOOGLE_SECRET")).toBe("from-env");
    expect(loaded.config.organizations[0]!.identityProviders![0]!.clientSecret).toEqual({ fromEnv: "ACME_GOOGLE_SECRET" });
  });

  it("names a missing variable before anything else happens", () => {
    expect(() => parseConfig(FILE, "porta.yaml", {})).toThrow(new UsageError("porta.yaml names secrets in environment variables that are not set: ACME_GOOGLE_SECRET. Nothing was changed."));
  });

  it("refuses a secret written into the file, unknown fields and a key used twice, with the path of each", () => {
    const bad = `version: 1
organizations:
  - slug: acme
    colour: red
    clients:
      - { name: Web, clientType: public }
      - { name: Web, clientType: public }
    identityProviders:
      - { name: Google, kind: google, clientSecret: plain-text }
`;
    let message = "";
    try {
      parseConfig(bad, "porta.yaml", {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("porta.yaml does not match the configuration's schema");
    expect(message).toContain('organizations[0]: Unrecognized key: "colour"');
    expect(message).toContain('organizations[0].clients[1]: client "Web" appears twice');
    expect(message).toContain("organizations[0].identityProviders[0].clientSecret");
  });

  it("refuses text that is not YAML", () => {
    expect(() => parseConfig("version: [1", "porta.yaml", {})).toThrow(/porta.yaml is not valid YAML/);
  });
});
