import type { JWTPayload } from "jose";
import type { MetadataDocumentClients } from "./storage/client-metadata-documents";
import type Provider from "oidc-provider";
import type { Client, Configuration, CookiesSetOptions, ErrorOut, FindAccount, interactionPolicy, KoaContextWithOIDC } from "oidc-provider";
import type { Logger } from "pino";
import type { Organization, PrismaClient } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { KeyValueStore } from "../cache/store";
import type { Database } from "../db/client";
import type { PrivateSigningJwk } from "./provider/keys";
import type { TenantApiResource } from "./provider/tenant-load";
import type { RevokedTokens } from "./storage/revoked-tokens";

/*
 * What a protocol feature is and what it is handed, apart from the modules that build the
 * provider: provider/configuration.ts and provider/patches.ts list the features (FEATURES), and
 * a feature sees only these shapes, so no import leads from a feature back to the builders.
 */

/** What a provider is built from (provider/configuration.ts `buildProviderConfiguration`). */
export interface ProviderInput {
  organization: Organization;
  issuer: string;
  jwks: PrivateSigningJwk[];
  /** Custom claim definitions of the organization's applications. */
  customClaims: Array<{ id: string; claimName: string; scope: string }>;
  /** The organization's active API resources with their client grants (features/api-resources.ts). */
  apiResources?: TenantApiResource[] | undefined;
  encryptionKey: Buffer;
  /**
   * The Admin API as a resource in the super-admin organization, the organization's own
   * administration door in every other (decision 090): admin clients' access tokens are for it
   * unless they ask for another resource.
   */
  adminApiResource?: string | undefined;
  /** The claims of an access token JWT whose signature verifies, else undefined. */
  claimsOfSignedJwt(value: string): Promise<JWTPayload | undefined>;
  /** Seconds; the `tokens.accessTokenTtlSeconds` setting when the provider was built. */
  accessTokenTtl: number;
  prisma: PrismaClient;
  /** Plain SQL for the durable token and grant rows (storage/adapter.ts). */
  sql: Pick<Database, "query">;
  cache: ReadThroughCache;
  store: KeyValueStore;
  revokedTokens: RevokedTokens;
  /** Outbound requests (a client's jwks_uri) may reach private addresses (OUTBOUND_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks?: boolean;
  /** Client ID metadata documents, fetched and kept once per process (storage/client-metadata-documents.ts). */
  clientDocuments?: MetadataDocumentClients;
}

/** The few pages the provider renders itself (edge/pages.ts `providerPages`). */
export interface ProviderPages {
  renderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void>;
  logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void>;
  postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void>;
  /** RFC 8628 (decision 049): where the person enters the code their device shows. */
  userCodeInputSource(ctx: KoaContextWithOIDC, form: string, out?: ErrorOut, err?: Error): Promise<void>;
  userCodeConfirmSource(ctx: KoaContextWithOIDC, form: string, client: Client, deviceInfo: unknown, userCode: string): Promise<void>;
  successSource(ctx: KoaContextWithOIDC): Promise<void>;
}

/**
 * What a feature's configuration is made from (FEATURES, features/index.ts): the provider's input, its
 * pages, its session cookie, the organization's scopes and those of them that name a user.
 */
export interface FeatureInput extends ProviderInput {
  pages: ProviderPages;
  sessionCookie: CookiesSetOptions;
  scopes: string[];
  userScopes: ReadonlySet<string>;
}

/** What one feature adds to the configuration. */
export type ConfigurationFragment = Partial<Configuration>;

/** What the patches of one organization's provider are made with. */
export interface PatchContext {
  organization: Organization;
  issuer: string;
  /** The Admin API (super-admin organization) or the organization's administration door, as a resource. */
  adminApiResource: string | undefined;
  /** The provider's own account lookup (provider/account.ts). */
  findAccount: FindAccount;
  /** Whether `presented` is an active secret of this organization's client (secrets are stored hashed). */
  clientSecretMatches(clientId: string, presented: string): Promise<boolean>;
  logger: Logger;
  /** Where a provider's sign-out (end_session) hands the logout tokens it would send: to the job queue (decision 048). */
  onBackchannelLogout?: ((notice: LogoutNotice) => Promise<void>) | undefined;
  /** Records a token exchange (the audit); the token is answered only once this resolves (decision 053). */
  onTokenExchanged?: ((organizationId: string, record: TokenExchangeRecord) => Promise<void>) | undefined;
  /** Records a sign-out at end_session (the audit, and what it causes: decision 093); the answer waits for it. */
  onSignedOut?: ((record: SignOutRecord) => Promise<void>) | undefined;
}

/** A person's sign-out at an organization's end-session endpoint. */
export interface SignOutRecord {
  organizationId: string;
  userId: string;
  /** The application that asked, when one did. */
  clientId: string | null;
  /** Whether the whole browser session ended, or only that application's part of it. */
  allClients: boolean;
  ip: string | null;
}

/** A client to tell that a session ended (features/backchannel-logout.ts, decision 048). */
export interface LogoutNotice {
  organizationId: string;
  clientId: string;
  /** The user's subject at the client. */
  sub: string;
  /** The session's id at the client, when the session is known (it is not for a grant whose browser session ended). */
  sid: string | null;
}

/** What the audit records of one exchange: identifiers, never a token. */
export interface TokenExchangeRecord {
  clientId: string;
  /** The person the issued token speaks for. */
  accountId: string;
  /** The subject token's client. */
  subjectClientId: string;
  /** The issued token's `act` (who acts for the person), when there is one. */
  act: Actor | null;
  audience: string;
  scope: string;
  expiresIn: number;
  ip: string;
}

/** Who acts for the person in an exchanged token (`act`, RFC 8693 §4.1). */
export interface Actor {
  sub: string;
  act?: Actor;
}

/** A change a feature makes to each built provider; applied by provider/patches.ts only. */
export type Patch = (provider: Provider, context: PatchContext) => void;

/**
 * What one protocol feature of Porta changes in oidc-provider, all in its own module: what it adds
 * to the provider's configuration (provider/configuration.ts composes the fragments), the checks
 * it adds to the login prompt, and what it changes on each built provider (provider/patches.ts
 * applies the patches, in the order of FEATURES).
 */
export interface Feature {
  /** The module's name in features/ (oidc/features.test.ts holds every module to the list). */
  name: string;
  configuration?(input: FeatureInput): ConfigurationFragment;
  /** Checks of the login prompt, after the base's own (the interaction policy is the same for every organization). */
  loginChecks?: readonly interactionPolicy.Check[];
  patches?: readonly Patch[];
}
