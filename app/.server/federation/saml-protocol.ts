import { randomBytes } from "node:crypto";
import type { CacheProvider, SAML } from "@node-saml/node-saml";
import { onFirstUse } from "../lazy";
import type { SamlSettings } from "~/schemas/identity-provider";
import type { SamlAddresses } from "./saml-addresses";
import { certificatePem } from "./saml-certificates";
import { addEcdsaVerification } from "./xml-ecdsa";

/**
 * The service-provider side of one SAML connection, spoken by node-saml (decision 081): the
 * AuthnRequest (HTTP-Redirect binding), the SP metadata, and the options the ACS validates an
 * HTTP-POST response with. Porta keeps no state in node-saml: the request ID lives in the
 * sign-in's pending state, and the cache node-saml asks answers only that one ID.
 */

/** Clock difference tolerated between the IdP and Porta, both ways. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** An assertion is accepted at most this long after the IdP issued it, whatever its NotOnOrAfter says. */
export const SAML_MAX_ASSERTION_AGE_MS = 10 * 60_000;
/** A sign-in's AuthnRequest is answered within this time (the pending state lives as long). */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;

/** The AuthnRequest a sign-in sent: its ID (the response's InResponseTo) and when. */
export interface SentRequest {
  id: string;
  issuedAt: string;
}

export interface SamlConnection {
  /** The IdP's entity ID (the provider row's `issuer`). */
  idpEntityId: string;
  settings: SamlSettings;
  addresses: SamlAddresses;
  /** The connection's decryption key (PEM) when its assertions arrive encrypted. */
  decryptionKey: string | null;
}

/** node-saml's InResponseTo cache, answering only the request this browser's sign-in sent. */
function onlyThisRequest(request: SentRequest | null): CacheProvider {
  return {
    saveAsync: () => Promise.resolve(null),
    getAsync: (key: string) => Promise.resolve(request && key === request.id ? request.issuedAt : null),
    removeAsync: () => Promise.resolve(null),
  };
}

/** node-saml (with xml-crypto and xmldom) loads with the first SAML sign-in, not at every start (decision 056). */
export const nodeSaml = onFirstUse(async () => {
  const [saml, xmlCrypto] = await Promise.all([import("@node-saml/node-saml"), import("xml-crypto")]);
  // The same xml-crypto node-saml checks signatures with (one copy in the tree), taught ECDSA.
  addEcdsaVerification(xmlCrypto.SignedXml);
  return saml;
});

/** A request ID: an XML ID (NCName) that cannot be guessed. */
export const newRequestId = () => `_${randomBytes(20).toString("hex")}`;

export async function samlFor(connection: SamlConnection, request: SentRequest | null, requestId: () => string = newRequestId): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await nodeSaml();
  return new SAML({
    entryPoint: connection.settings.ssoUrl,
    issuer: connection.addresses.entityId,
    audience: connection.addresses.entityId,
    callbackUrl: connection.addresses.acsUrl,
    idpIssuer: connection.idpEntityId,
    idpCert: connection.settings.signingCertificates.map(certificatePem),
    ...(connection.decryptionKey ? { decryptionPvk: connection.decryptionKey } : {}),
    identifierFormat: connection.settings.nameIdFormat,
    // Either the response or the assertion must carry a valid signature (node-saml requires the
    // assertion's when the response has none).
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    maxAssertionAgeMs: SAML_MAX_ASSERTION_AGE_MS,
    // Without a request (IdP-initiated), any InResponseTo is refused: the cache answers none.
    validateInResponseTo: request ? ValidateInResponseTo.always : ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
    cacheProvider: onlyThisRequest(request),
    generateUniqueId: requestId,
    // The IdP decides how the person signs in; Porta reads what it says it did (AuthnContextClassRef).
    disableRequestedAuthnContext: true,
    signatureAlgorithm: "sha256",
  });
}

/** The IdP's sign-in address with a deflated AuthnRequest and the RelayState (HTTP-Redirect binding), and the request sent. */
export async function authnRequestUrl(connection: SamlConnection, relayState: string): Promise<{ url: string; request: SentRequest }> {
  const id = newRequestId();
  // node-saml only compares this instant with requestIdExpirationPeriodMs; the sign-in's state keeps it with the ID.
  const issuedAt = new Date().toISOString();
  const url = await (await samlFor(connection, null, () => id)).getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, request: { id, issuedAt } };
}

/** The SP metadata the IdP is configured from: entity ID, ACS (HTTP-POST), NameID format, and the encryption certificate when there is one. */
export async function serviceProviderMetadata(connection: SamlConnection): Promise<string> {
  const { generateServiceProviderMetadata } = await nodeSaml();
  const encryption = connection.settings.encryptionCertificate && connection.decryptionKey ? connection.settings.encryptionCertificate : null;
  return generateServiceProviderMetadata({
    issuer: connection.addresses.entityId,
    callbackUrl: connection.addresses.acsUrl,
    identifierFormat: connection.settings.nameIdFormat,
    wantAssertionsSigned: true,
    ...(encryption ? { decryptionPvk: connection.decryptionKey ?? undefined, decryptionCert: certificatePem(encryption) } : {}),
  });
}
