import type { IdentityProvider as IdentityProviderRow } from "~/generated/prisma/client";
import {
  type PortableSamlSettings,
  SAML_NAME_ID_FORMATS,
  type SamlConnection,
  type SamlNameIdFormat,
  type SamlSettings,
  type SamlSettingsInput,
} from "~/schemas/identity-provider";
import type { Config } from "../config/env";
import type { Db } from "../context";
import { validation, type FieldDetail } from "../errors";
import { guardedFetch, OutboundRefusedError } from "../outbound/guard";
import { certificateInfo, generateEncryptionKeyPair, normalizeCertificate, sameCertificates } from "./saml-credentials";
import { samlAddresses } from "./saml-addresses";
import { parseIdpMetadata, SAML_METADATA_MAX_BYTES, type IdpMetadata } from "./saml-metadata";
import { getSamlSettings } from "./saml-settings";

/**
 * The management side of SAML connections (decision 081): an IdentityProvider of kind saml made
 * from the IdP's metadata (pasted or fetched), or from its entity ID, SSO URL and certificates;
 * its group roles and IdP-initiated client checked against the organization; its decryption key
 * generated here. providers.ts stores what this returns and encrypts the key.
 */

export const SAML_METADATA_TIMEOUT_MS = 10_000;
/** How old fetched metadata may get before the scheduled refresh fetches it again. */
export const SAML_METADATA_REFRESH_MS = 6 * 60 * 60_000;

/** Most IdPs send a NameID of their choosing when asked for "unspecified"; a connection may ask for another. */
const DEFAULT_NAME_ID_FORMAT: SamlNameIdFormat = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified";

/** A SAML connection as the Admin API answers it. */
export function samlConnectionOf(row: Pick<IdentityProviderRow, "id" | "kind" | "saml">, baseUrl: string, slug: string): SamlConnection | null {
  const settings = getSamlSettings(row);
  if (!settings) return null;
  const addresses = samlAddresses(baseUrl, slug, row.id);
  return {
    ...settings,
    entityId: addresses.entityId,
    acsUrl: addresses.acsUrl,
    spMetadataUrl: addresses.metadataUrl,
    certificates: settings.signingCertificates.map(certificateInfo),
    encryption: settings.encryptionCertificate ? certificateInfo(settings.encryptionCertificate) : null,
  };
}

type FetchContext = {
  config: Pick<Config, "outboundAllowPrivateNetworks">;
  /** Metadata already fetched by URL (`prefetchIdpMetadata`), so that a write's transaction does not wait on the network. */
  metadataTexts?: ReadonlyMap<string, string> | undefined;
};

/** Why a metadata URL gave nothing usable, without echoing what it served. */
export class MetadataFetchError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "MetadataFetchError";
  }
}

/** The IdP's metadata from its URL, through the outbound guard: refused addresses, a timeout and a size cap. */
export async function fetchIdpMetadataText(ctx: FetchContext, url: string): Promise<string> {
  const fetch = guardedFetch({ allowPrivateNetworks: ctx.config.outboundAllowPrivateNetworks, timeoutMs: SAML_METADATA_TIMEOUT_MS, maxBytes: SAML_METADATA_MAX_BYTES });
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "application/samlmetadata+xml, application/xml, text/xml" } });
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw new MetadataFetchError(error.message);
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) throw new MetadataFetchError("the request timed out");
    throw new MetadataFetchError("could not be reached");
  }
  if (response.status !== 200) throw new MetadataFetchError(`answered HTTP ${response.status}`);
  return response.text();
}

/** The metadata text at a URL; a 422 on `field` when it cannot be fetched. */
async function metadataTextFrom(ctx: FetchContext, url: string, field: string): Promise<string> {
  const prefetched = ctx.metadataTexts?.get(url);
  if (prefetched !== undefined) return prefetched;
  try {
    return await fetchIdpMetadataText(ctx, url);
  } catch (error) {
    if (error instanceof MetadataFetchError) throw validation([{ field, message: `could not be fetched: ${error.reason}` }]);
    throw error;
  }
}

/**
 * Fetches a metadata URL before a write's transaction opens (a slow IdP must hold no database
 * connection); the write's context carries the result as `metadataTexts`.
 */
export async function prefetchIdpMetadata(ctx: FetchContext, url: string | undefined, field: string): Promise<ReadonlyMap<string, string> | undefined> {
  return url === undefined ? undefined : new Map([[url, await metadataTextFrom(ctx, url, field)]]);
}

/** Metadata from a URL, parsed; a 422 on `field` when it cannot be fetched or read. */
async function metadataFromUrl(ctx: FetchContext, url: string, field: string): Promise<IdpMetadata> {
  return metadataFromText(await metadataTextFrom(ctx, url, field), field);
}

function metadataFromText(xml: string, field: string): IdpMetadata {
  const parsed = parseIdpMetadata(xml, field);
  if (!parsed.ok) throw validation(parsed.problems);
  return parsed.metadata;
}

/** Pasted certificates as PEM; a 422 naming each one that is not a certificate. */
function certificatesOf(texts: string[], field: string): string[] {
  const problems: FieldDetail[] = [];
  const pems: string[] = [];
  texts.forEach((text, i) => {
    const pem = normalizeCertificate(text);
    if (!pem) problems.push({ field: `${field}.${i}`, message: "is not an X.509 certificate (PEM or base64 DER)" });
    else if (!pems.includes(pem)) pems.push(pem);
  });
  if (problems.length > 0) throw validation(problems);
  return pems;
}

/** Group roles name roles of the organization; the IdP-initiated client is one of its clients. */
async function checkOrganizationReferences(db: Db, organizationId: string, input: SamlSettingsInput) {
  const problems: FieldDetail[] = [];
  if (input.groupRoles && input.groupRoles.length > 0) {
    const names = [...new Set(input.groupRoles.flatMap((g) => g.roles))];
    const found = new Set((await db.role.findMany({ where: { organizationId, name: { in: names } }, select: { name: true } })).map((r) => r.name));
    input.groupRoles.forEach((g, i) =>
      g.roles.forEach((role, j) => {
        if (!found.has(role)) problems.push({ field: `saml.groupRoles.${i}.roles.${j}`, message: `names no role of this organization: ${role}` });
      }),
    );
  }
  if (input.idpInitiatedClientId) {
    const client = await db.client.findFirst({ where: { id: input.idpInitiatedClientId, organizationId }, select: { id: true, initiateLoginUri: true } });
    if (!client) problems.push({ field: "saml.idpInitiatedClientId", message: "is not a client of this organization" });
    // IdP-initiated sign-in sends the browser to the application's own sign-in start (decision 083).
    else if (!client.initiateLoginUri) problems.push({ field: "saml.idpInitiatedClientId", message: "has no sign-in start address (initiateLoginUri): set one on the client first" });
  }
  if (problems.length > 0) throw validation(problems);
}

export interface SamlCreateInput {
  organizationId: string;
  issuer?: string | undefined;
  samlMetadataXml?: string | undefined;
  samlMetadataUrl?: string | undefined;
  saml?: SamlSettingsInput | undefined;
}

/** What a new connection stores: the IdP's entity ID as issuer, the settings, and the decryption key in clear (encrypted by the caller). */
export interface SamlWrite {
  issuer: string;
  settings: SamlSettings;
  /** undefined: leave the stored key; null: remove it; a PEM: store it. */
  decryptionKeyPem: string | null | undefined;
}

const withoutUndefined = <T extends object>(value: T) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

export async function resolveSamlCreate(ctx: { db: Db } & FetchContext, input: SamlCreateInput): Promise<SamlWrite> {
  const given = input.saml ?? {};
  await checkOrganizationReferences(ctx.db, input.organizationId, given);
  const metadata =
    input.samlMetadataXml !== undefined
      ? metadataFromText(input.samlMetadataXml, "samlMetadataXml")
      : input.samlMetadataUrl !== undefined
        ? await metadataFromUrl(ctx, input.samlMetadataUrl, "samlMetadataUrl")
        : null;
  const issuer = metadata?.entityId ?? input.issuer!.trim();
  const ssoUrl = metadata?.ssoUrl ?? given.ssoUrl!;
  const signingCertificates = metadata?.signingCertificates ?? certificatesOf(given.signingCertificates!, "saml.signingCertificates");
  // A format the IdP lists and Porta can keep links with, when the administrator named none.
  const offered = metadata?.nameIdFormats.find((f) => f !== DEFAULT_NAME_ID_FORMAT && (SAML_NAME_ID_FORMATS as readonly string[]).includes(f)) as SamlNameIdFormat | undefined;
  const keyPair = given.encryption ? await generateEncryptionKeyPair(`Porta SAML ${issuer}`) : null;
  return {
    issuer,
    settings: {
      ssoUrl,
      signingCertificates,
      metadataUrl: input.samlMetadataUrl ?? null,
      metadataRefreshedAt: input.samlMetadataUrl !== undefined ? new Date().toISOString() : null,
      nameIdFormat: given.nameIdFormat ?? offered ?? DEFAULT_NAME_ID_FORMAT,
      allowSha1: given.allowSha1 ?? false,
      idpInitiatedClientId: given.idpInitiatedClientId ?? null,
      groupRoles: given.groupRoles ?? [],
      encryptionCertificate: keyPair?.certificatePem ?? null,
    },
    decryptionKeyPem: keyPair?.privateKeyPem ?? null,
  };
}

export interface SamlUpdateInput {
  issuer?: string | undefined;
  samlMetadataXml?: string | undefined;
  saml?: SamlSettingsInput | undefined;
}

/** The settings after an update of a SAML connection; the issuer when it changes. */
export async function resolveSamlUpdate(ctx: { db: Db } & FetchContext, current: IdentityProviderRow, input: SamlUpdateInput): Promise<Partial<SamlWrite> & { settings: SamlSettings }> {
  const stored = getSamlSettings(current);
  if (!stored) throw validation([{ field: "saml", message: "the stored settings do not parse; give them again with samlMetadataXml or saml" }]);
  const given = input.saml ?? {};
  await checkOrganizationReferences(ctx.db, current.organizationId, given);
  const metadata = input.samlMetadataXml !== undefined ? metadataFromText(input.samlMetadataXml, "samlMetadataXml") : null;
  const settings: SamlSettings = {
    ...stored,
    ...withoutUndefined({
      ssoUrl: metadata?.ssoUrl ?? given.ssoUrl,
      signingCertificates: metadata?.signingCertificates ?? (given.signingCertificates ? certificatesOf(given.signingCertificates, "saml.signingCertificates") : undefined),
      metadataUrl: given.metadataUrl,
      nameIdFormat: given.nameIdFormat,
      allowSha1: given.allowSha1,
      idpInitiatedClientId: given.idpInitiatedClientId,
      groupRoles: given.groupRoles,
    }),
  };
  let decryptionKeyPem: string | null | undefined;
  if (given.encryption === true && !stored.encryptionCertificate) {
    const keyPair = await generateEncryptionKeyPair(`Porta SAML ${current.issuer}`);
    settings.encryptionCertificate = keyPair.certificatePem;
    decryptionKeyPem = keyPair.privateKeyPem;
  } else if (given.encryption === false && stored.encryptionCertificate) {
    settings.encryptionCertificate = null;
    decryptionKeyPem = null;
  }
  const issuer = metadata?.entityId ?? input.issuer?.trim();
  return { settings, decryptionKeyPem, ...(issuer !== undefined ? { issuer } : {}) };
}

/** What a refresh changed, for the audit entry (certificates by fingerprint, never whole). */
export interface MetadataChange {
  ssoUrl?: { before: string; after: string };
  issuer?: { before: string; after: string };
  certificates?: { before: string[]; after: string[] };
}

const fingerprints = (pems: string[]) => pems.map((pem) => certificateInfo(pem)?.fingerprint ?? "unparsable");

/**
 * Fetches a connection's metadata URL now and returns the settings it gives, with what changed
 * (null when nothing did). The fetch's or the parse's failure throws: the caller keeps the old
 * settings and says so.
 */
export type RefreshedSettings = Awaited<ReturnType<typeof refreshedSettings>>;

export async function refreshedSettings(ctx: FetchContext, row: Pick<IdentityProviderRow, "kind" | "saml" | "issuer">, now: Date = new Date()): Promise<{ issuer: string; settings: SamlSettings; change: MetadataChange | null }> {
  const stored = getSamlSettings(row);
  if (!stored?.metadataUrl) throw validation([{ field: "saml.metadataUrl", message: "is not set: this connection's settings were entered by hand" }]);
  const metadata = await metadataFromUrl(ctx, stored.metadataUrl, "saml.metadataUrl");
  const change: MetadataChange = {};
  if (metadata.ssoUrl !== stored.ssoUrl) change.ssoUrl = { before: stored.ssoUrl, after: metadata.ssoUrl };
  if (metadata.entityId !== row.issuer) change.issuer = { before: row.issuer, after: metadata.entityId };
  if (!sameCertificates(metadata.signingCertificates, stored.signingCertificates)) {
    change.certificates = { before: fingerprints(stored.signingCertificates), after: fingerprints(metadata.signingCertificates) };
  }
  return {
    issuer: metadata.entityId,
    settings: { ...stored, ssoUrl: metadata.ssoUrl, signingCertificates: metadata.signingCertificates, metadataRefreshedAt: now.toISOString() },
    change: Object.keys(change).length > 0 ? change : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Export and import (decision 055's packages): the settings travel, the decryption key does not.

/** A connection's settings as a package carries them; null for other kinds or unreadable settings. */
export function portableSamlOf(row: Pick<IdentityProviderRow, "kind" | "saml" | "clientSecretEncrypted">): PortableSamlSettings | null {
  const settings = getSamlSettings(row);
  if (!settings) return null;
  const { encryptionCertificate, ...rest } = settings;
  return { ...rest, hadDecryptionKey: encryptionCertificate !== null && row.clientSecretEncrypted !== null };
}

/**
 * The settings an import writes. A connection that encrypted keeps the target's key pair when it
 * has one; otherwise it gets a new one here (its certificate must then be given to the IdP).
 */
export async function importedSamlSettings(
  given: PortableSamlSettings,
  existing: Pick<IdentityProviderRow, "kind" | "saml" | "clientSecretEncrypted"> | null,
  commonName: string,
): Promise<{ settings: SamlSettings; decryptionKeyPem: string | null | undefined }> {
  const { hadDecryptionKey, ...rest } = given;
  const kept = existing ? getSamlSettings(existing) : null;
  if (!hadDecryptionKey) return { settings: { ...rest, encryptionCertificate: null }, decryptionKeyPem: null };
  if (kept?.encryptionCertificate && existing?.clientSecretEncrypted) return { settings: { ...rest, encryptionCertificate: kept.encryptionCertificate }, decryptionKeyPem: undefined };
  const keyPair = await generateEncryptionKeyPair(commonName);
  return { settings: { ...rest, encryptionCertificate: keyPair.certificatePem }, decryptionKeyPem: keyPair.privateKeyPem };
}
