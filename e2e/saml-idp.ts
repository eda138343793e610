import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { SamlSettings } from "~/schemas/identity-provider";
import { createClient, createOrganization } from "../test/support/factories";
import { base64, makeKeyPair, readRedirect, responseXml, signResponse } from "../test/support/saml-idp";
import { BASE_URL, RP_REDIRECT_URI, type Seed } from "./seed";

/**
 * A company's SAML identity provider for e2e/saml.spec.ts, in the process that runs Porta
 * (e2e/server.ts): samlify's signing (test/support/saml-idp.ts) behind two pages of its own. The
 * first answers Porta's AuthnRequest (HTTP-Redirect) with "Sign in as …"; the second carries the
 * signed response to Porta's Assertion Consumer Service as a form the person sends (HTTP-POST
 * binding), as IdPs do when scripts are off.
 */
export const SAML_IDP_PORT = 3964;
const IDP_URL = `http://127.0.0.1:${SAML_IDP_PORT}`;
const IDP_ENTITY_ID = `${IDP_URL}/metadata`;
/** The company's DNS console (e2e/company-dns.ts), on the IdP's server. */
export const COMPANY_DNS_URL = `${IDP_URL}/dns`;
/** What the IdP's administrator types into Porta's connection form (e2e/setup-link.spec.ts). */
export const SAML_IDP = { entityId: IDP_ENTITY_ID, ssoUrl: `${IDP_URL}/sso` } as const;
export const SAML_DOMAIN = "acme-saml.example.test";
export const SAML_PERSON = { nameId: "acme-0001", email: `ada@${SAML_DOMAIN}`, givenName: "Ada", familyName: "Lovelace", group: "engineering" } as const;
export const SAML_ROLE = "engineer";

const html = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const attr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export interface RunningSamlIdp {
  certificate: string;
  /** AuthnRequests received. */
  requests: number;
  close(): Promise<void>;
}

/** `more` answers requests of the company's other consoles on the same server (e2e/company-dns.ts). */
export async function startSamlIdp(more: (req: IncomingMessage, res: ServerResponse) => Promise<boolean> = async () => false): Promise<RunningSamlIdp> {
  const keys = makeKeyPair("rsa", "/CN=Acme Workforce IdP");
  const state = { requests: 0 };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (await more(req, res)) return;
    const url = new URL(req.url ?? "/", IDP_URL);
    res.setHeader("content-type", "text/html; charset=utf-8");
    if (req.method === "GET" && url.pathname === "/sso") {
      state.requests += 1;
      const request = readRedirect(url.href);
      if (!request.id || !request.acsUrl) {
        res.writeHead(400).end(html("Acme Workforce", "<p>Not a SAML request.</p>"));
        return;
      }
      res.end(
        html(
          "Acme Workforce",
          `<form method="post" action="/sso/continue">` +
            `<input type="hidden" name="id" value="${attr(request.id)}"><input type="hidden" name="acs" value="${attr(request.acsUrl)}"><input type="hidden" name="relayState" value="${attr(request.relayState)}">` +
            `<button type="submit">Sign in as ${SAML_PERSON.givenName} ${SAML_PERSON.familyName}</button></form>`,
        ),
      );
      return;
    }
    if (req.method === "POST" && url.pathname === "/sso/continue") {
      const form = await formOf(req);
      const acsUrl = form.get("acs") ?? "";
      const xml = responseXml({
        idpEntityId: IDP_ENTITY_ID,
        // Porta's SP entity ID is its metadata address, beside the ACS.
        audience: acsUrl.replace(/\/acs$/, "/metadata"),
        acsUrl,
        inResponseTo: form.get("id"),
        nameId: SAML_PERSON.nameId,
        attributes: { email: [SAML_PERSON.email], firstName: [SAML_PERSON.givenName], lastName: [SAML_PERSON.familyName], groups: [SAML_PERSON.group, "all-staff"] },
      });
      res.end(
        html(
          "Acme Workforce",
          `<form method="post" action="${attr(acsUrl)}">` +
            `<input type="hidden" name="SAMLResponse" value="${attr(base64(signResponse(xml, keys)))}"><input type="hidden" name="RelayState" value="${attr(form.get("relayState") ?? "")}">` +
            `<button type="submit">Continue to the application</button></form>`,
        ),
      );
      return;
    }
    res.writeHead(404).end(html("Not found", ""));
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(SAML_IDP_PORT, "127.0.0.1", resolve));
  return {
    certificate: keys.cert,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An organization whose people sign in through the Acme IdP: accounts made on the way, the engineering group made engineers. */
export async function seedSaml(prisma: Parameters<typeof createOrganization>[0], idpCertificate: string): Promise<NonNullable<Seed["saml"]>> {
  const org = await createOrganization(prisma, { slug: "e2e-saml", name: "Acme Customer Portal", defaultLoginMethods: ["password", "federated"] });
  await prisma.role.create({ data: { organizationId: org.id, name: SAML_ROLE, description: "Members of the IdP's engineering group" } });
  const settings: SamlSettings = {
    ssoUrl: `${IDP_URL}/sso`,
    signingCertificates: [idpCertificate],
    metadataUrl: null,
    metadataRefreshedAt: null,
    nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
    allowSha1: false,
    idpInitiatedClientId: null,
    groupRoles: [{ group: SAML_PERSON.group, roles: [SAML_ROLE] }],
    encryptionCertificate: null,
  };
  const providerName = "Acme Workforce";
  await prisma.identityProvider.create({
    data: {
      id: randomUUID(),
      organizationId: org.id,
      name: providerName,
      kind: "saml",
      issuer: IDP_ENTITY_ID,
      clientId: "",
      saml: settings,
      domains: [SAML_DOMAIN],
      assumeVerifiedEmails: true,
      createAccounts: true,
    },
  });
  // Assumed emails create accounts only for a domain the organization verified (decision 086).
  await prisma.organizationDomain.create({
    data: { organizationId: org.id, domain: SAML_DOMAIN, verificationToken: randomUUID(), status: "verified", verifiedAt: new Date(), lastCheckedAt: new Date() },
  });
  const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_REDIRECT_URI], skipConsent: true });
  return {
    slug: org.slug,
    providerName,
    person: { email: SAML_PERSON.email, givenName: SAML_PERSON.givenName, familyName: SAML_PERSON.familyName },
    role: SAML_ROLE,
    rp: { issuer: `${BASE_URL}/${org.slug}`, clientId: client.id, clientSecret: secret!.value, redirectUri: RP_REDIRECT_URI },
  };
}
