import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headlessLogin, runPorta } from "../cli/helpers";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";

/** Federation (decision 046): `porta identity-providers create …` (the command comes from the OpenAPI document, decision 037). */
describe("porta identity-providers", () => {
  let porta: TestPorta;
  let configDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    porta = await startTestPorta();
    configDir = mkdtempSync(path.join(tmpdir(), "porta-cli-idp-"));
    env = { PORTA_CONFIG_DIR: configDir };
    expect((await headlessLogin(porta, env)).code).toBe(0);
  });
  afterAll(async () => {
    await porta?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  it("creates a provider with a write-only secret and lists it", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const created = await runPorta(
      ["identity-providers", "create", "--organization-id", org.id, "--name", "Corp SSO", "--issuer", "https://sso.corp.example", "--client-id", "corp", "--client-secret", "cli-secret-value", "--json"],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const { data } = JSON.parse(created.stdout) as { data: Record<string, unknown> };
    expect(data).toMatchObject({ name: "Corp SSO", issuer: "https://sso.corp.example", hasClientSecret: true, callbackUrl: `${porta.baseUrl}/${org.slug}/federation/callback` });
    expect(created.stdout).not.toContain("cli-secret-value");
    const listed = await runPorta(["identity-providers", "list", "--organization-id", org.id, "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 1, data: [{ name: "Corp SSO" }] });
    const help = await runPorta(["identity-providers", "create", "--help"], env);
    expect(help.stdout + help.stderr).toContain("--client-secret");
  });

  it("chooses the token-endpoint authentication and refuses a secret method without a secret (decision 082)", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const base = ["identity-providers", "create", "--organization-id", org.id, "--issuer", "https://sso.corp.example", "--client-id", "corp", "--json"];
    const created = await runPorta([...base, "--name", "Keyed", "--token-endpoint-auth-method", "private_key_jwt"], env);
    expect(created.code, created.stderr).toBe(0);
    const { data } = JSON.parse(created.stdout) as { data: { id: string; tokenEndpointAuthMethod: string; jwksUrl: string } };
    expect(data).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", jwksUrl: `${porta.baseUrl}/${org.slug}/federation/providers/${data.id}/jwks` });
    const refused = await runPorta([...base, "--name", "Posted", "--token-endpoint-auth-method", "client_secret_post"], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("clientSecret");
  });
});
