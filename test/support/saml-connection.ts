import { randomBytes, randomUUID } from "node:crypto";
import * as oidc from "openid-client";
import { expect } from "vitest";
import type { SamlSettings } from "~/schemas/identity-provider";
import { csrfOf } from "./browser";
import { recordVerifiedDomains } from "./domains";
import { CookieJar } from "./oidc";
import type { TestPorta } from "./porta";
import { base64, readRedirect, responseXml, signAssertion, type KeyPair, type ResponseFields } from "./saml-idp";
import type { Tenant } from "../login/helpers";

/**
 * SAML connections for tests, written straight to the database (the Admin API for them is
 * another part's), and a browser that signs in through one: the login page's button, the
 * redirect to the IdP, the IdP's post to the ACS (cross-site: no cookies of Porta's go with it),
 * and on to the relying party.
 */

export interface SamlConnectionRow {
  id: string;
  name: string;
  idpEntityId: string;
  acsUrl: string;
  entityId: string;
  metadataUrl: string;
}

export async function createSamlConnection(
  porta: TestPorta,
  org: { id: string; slug: string },
  input: {
    idp: KeyPair;
    settings?: Partial<SamlSettings>;
    decryptionKey?: string;
    domains?: string[];
    assumeVerifiedEmails?: boolean;
    /**
     * Whether the organization has verified the connection's domains (decision 086: assumed
     * emails link accounts only then). By default it has when the connection assumes verified emails.
     */
    verifiedDomains?: boolean;
    createAccounts?: boolean;
    trustUpstreamMfa?: string;
    claimMapping?: Record<string, string>;
    enabled?: boolean;
  },
): Promise<SamlConnectionRow> {
  const id = randomUUID();
  const name = `SAML ${randomBytes(2).toString("hex")}`;
  const idpEntityId = `https://idp-${randomBytes(3).toString("hex")}.test/entity`;
  const settings: SamlSettings = {
    ssoUrl: "https://idp.test/sso",
    signingCertificates: [input.idp.cert],
    metadataUrl: null,
    metadataRefreshedAt: null,
    nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
    allowSha1: false,
    idpInitiatedClientId: null,
    groupRoles: [],
    encryptionCertificate: null,
    ...input.settings,
  };
  await porta.services.db.prisma.identityProvider.create({
    data: {
      id,
      organizationId: org.id,
      name,
      kind: "saml",
      issuer: idpEntityId,
      clientId: idpEntityId,
      scopes: [],
      saml: settings,
      domains: input.domains ?? [],
      assumeVerifiedEmails: input.assumeVerifiedEmails ?? false,
      createAccounts: input.createAccounts ?? true,
      trustUpstreamMfa: input.trustUpstreamMfa ?? "when_asserted",
      claimMapping: input.claimMapping ?? {},
      enabled: input.enabled ?? true,
      clientSecretEncrypted: input.decryptionKey ? porta.services.encrypter.encrypt(input.decryptionKey, `identity-provider-secret:${id}`) : null,
    },
  });
  if (input.verifiedDomains ?? input.assumeVerifiedEmails ?? false) await recordVerifiedDomains(porta, org.id, input.domains ?? []);
  const base = `${porta.baseUrl}/${org.slug}/saml/${id}`;
  return { id, name, idpEntityId, acsUrl: `${base}/acs`, entityId: `${base}/metadata`, metadataUrl: `${base}/metadata` };
}

export interface SamlFlow {
  jar: CookieJar;
  config: oidc.Configuration;
  verifier: string;
  loginUrl: string;
  html: string;
}

export const postForm = (jar: CookieJar, url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  jar.fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form).toString() });

/** The relying party sends a browser (a fresh one unless given) to the tenant; the login page it lands on. */
export async function openLogin(tenant: Tenant, headers: Record<string, string> = {}, browser?: CookieJar): Promise<SamlFlow> {
  const { started, ...flow } = await startAuthorization(tenant, headers, browser);
  expect(started.status).toBe(303);
  const page = await flow.jar.fetch(flow.loginUrl, { headers });
  expect(page.status).toBe(200);
  return { ...flow, html: await page.text() };
}

/** The relying party's authorization request (PKCE), answered with the way to the login page. */
export async function startAuthorization(tenant: Tenant, headers: Record<string, string> = {}, browser?: CookieJar) {
  const jar = browser ?? new CookieJar();
  const config = await oidc.discovery(new URL(tenant.issuer), tenant.client.id, undefined, oidc.ClientSecretBasic(tenant.secret!), { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const authorize = oidc.buildAuthorizationUrl(config, {
    redirect_uri: tenant.redirectUri,
    scope: "openid email profile",
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  const started = await jar.fetch(authorize, { headers });
  const loginUrl = new URL(started.headers.get("location") ?? "", authorize).href;
  return { jar, config, verifier, loginUrl, started };
}

/** The login page's button for the connection: the IdP's URL with the AuthnRequest read back. */
export async function startSaml(flow: SamlFlow, connection: SamlConnectionRow, headers: Record<string, string> = {}) {
  const res = await postForm(flow.jar, `${flow.loginUrl}/federated`, { csrf: csrfOf(flow.html), provider: connection.id }, headers);
  expect(res.status, await res.clone().text()).toBe(303);
  return readRedirect(res.headers.get("location")!);
}

/** The IdP's HTTP-POST binding: a cross-site form post to the ACS with the response and the RelayState. */
export function postToAcs(flow: SamlFlow, acsUrl: string, samlResponse: string, relayState: string) {
  return postForm(flow.jar, acsUrl, { SAMLResponse: samlResponse, RelayState: relayState }, { origin: "https://idp.test" });
}

/** A response for the sign-in the browser started, signed (assertion) by the IdP's key unless the test says otherwise. */
export function answer(connection: SamlConnectionRow, request: { id: string }, keys: KeyPair, more: Partial<ResponseFields> = {}, sign: (xml: string) => string = (xml) => signAssertion(xml, keys)) {
  return base64(
    sign(
      responseXml({
        idpEntityId: connection.idpEntityId,
        audience: connection.entityId,
        acsUrl: connection.acsUrl,
        inResponseTo: request.id,
        nameId: "nobody",
        ...more,
      }),
    ),
  );
}

/** Follows redirects until `stop` says so or a page answers. */
export async function follow(jar: CookieJar, res: Response, from: string, stop: (url: string) => boolean = () => false) {
  let current = res;
  let url = from;
  for (let i = 0; i < 12 && current.status >= 300 && current.status < 400; i++) {
    url = new URL(current.headers.get("location")!, url).href;
    if (stop(url)) return { res: current, url };
    await current.body?.cancel();
    current = await jar.fetch(url);
  }
  return { res: current, url };
}

export async function redeem(flow: SamlFlow, url: string) {
  const tokens = await oidc.authorizationCodeGrant(flow.config, new URL(url), { pkceCodeVerifier: flow.verifier });
  return tokens.claims()!;
}

/** An IdP-initiated response: it answers no request (no InResponseTo anywhere), signed like `answer`'s. */
export const unsolicited = (connection: SamlConnectionRow, keys: KeyPair, more: Partial<ResponseFields> = {}) => answer(connection, { id: "" }, keys, { inResponseTo: null, ...more });
