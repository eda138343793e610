import type { Client, FindAccount, KoaContextWithOIDC, TokenEndpointGrantContext } from "oidc-provider";
import type Provider from "oidc-provider";
import { errors } from "oidc-provider";
import { TOKEN_EXCHANGE_GRANT } from "~/schemas/client";
import type { AuditRecord } from "../../audit/audit";
import type { Actor, Feature, TokenExchangeRecord } from "../feature";

export type { TokenExchangeRecord } from "../feature";

/**
 * RFC 8693 token exchange at an organization's token endpoint (decision 053): a confidential
 * client trades a person's access token of this organization (the subject token) for a short
 * access token for one audience its policy allows, with the scope narrowed at most. With an
 * actor token, the issued token says who acts for the person (`act`, §4.1).
 */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** The exchanged token lives at most this long, and never past the subject token. */
export const EXCHANGED_TOKEN_MAX_SECONDS = 300;

/** The provider's client metadata property with the client's allowed audiences (client-policy.ts). */
export const TOKEN_EXCHANGE_AUDIENCES_PROPERTY = "porta_token_exchange_audiences";

const PARAMETERS = ["subject_token", "subject_token_type", "actor_token", "actor_token_type", "requested_token_type", "audience", "resource", "scope"];

export interface TokenExchangeOptions {
  /** The provider's own account lookup (provider/account.ts): an active person of this organization, or undefined. */
  findAccount: FindAccount;
  /**
   * Audiences never issued by exchange, whatever a client's list says: the Admin API (the
   * super-admin organization's resource), whose tokens only an administrator's own sign-in gives.
   */
  reservedAudiences: string[];
  /** Called after the token is stored and before it is answered; a failure answers an error, never the token. */
  onExchanged(record: TokenExchangeRecord): Promise<void>;
}

type ExchangeContext = TokenEndpointGrantContext<Record<string, unknown>>;
type AccessTokenInstance = InstanceType<Provider["AccessToken"]>;
type ClientCredentialsInstance = InstanceType<Provider["ClientCredentials"]>;

export const tokenExchangeAudiencesOf = (client: Client): string[] => {
  const value = client[TOKEN_EXCHANGE_AUDIENCES_PROPERTY];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
};

const values = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : typeof value === "string" ? [value] : []);

function singleParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The one audience of the request, which the client's policy must allow. */
function targetOf(params: Record<string, unknown>, allowed: string[]): string {
  const requested = [...new Set([...values(params.audience), ...values(params.resource)])];
  if (requested.length === 0) {
    if (allowed.length === 1) return allowed[0]!;
    throw new errors.InvalidRequest("audience or resource is required: this client may exchange tokens for more than one audience");
  }
  if (requested.length > 1) throw new errors.InvalidTarget("only one audience or resource may be requested per exchange");
  const [target] = requested as [string];
  if (!allowed.includes(target)) throw new errors.InvalidTarget("the client may not exchange tokens for this audience");
  return target;
}

const isSenderConstrained = (token: { jkt?: unknown; "x5t#S256"?: unknown }) => token.jkt !== undefined || token["x5t#S256"] !== undefined;

/**
 * A live, bearer access token of this organization (the adapter verifies a JWT's signature with
 * the organization's keys and finds its record; one of another organization never verifies).
 * A sender-constrained token is refused: exchanging it would shed its binding.
 */
async function personToken(provider: Provider, value: string): Promise<AccessTokenInstance | undefined> {
  const token = await provider.AccessToken.find(value);
  if (!token || token.isExpired || !token.accountId || isSenderConstrained(token)) return undefined;
  return token;
}

/** Who the actor token names: a person of this organization, or a client (its own token). */
async function actorSubOf(provider: Provider, value: string): Promise<string | undefined> {
  const person = await personToken(provider, value);
  if (person) return person.accountId;
  const machine: ClientCredentialsInstance | undefined = await provider.ClientCredentials.find(value);
  if (!machine || machine.isExpired || isSenderConstrained(machine)) return undefined;
  return machine.clientId;
}

function actOf(token: AccessTokenInstance): Actor | undefined {
  const act = (token.extra as Record<string, unknown> | undefined)?.act;
  return act && typeof act === "object" && typeof (act as Actor).sub === "string" ? (act as Actor) : undefined;
}

function scopeOf(requested: string | undefined, subjectScope: string | undefined): string {
  const granted = new Set((subjectScope ?? "").split(" ").filter(Boolean));
  if (requested === undefined) return [...granted].join(" ");
  const asked = [...new Set(requested.split(" ").filter(Boolean))];
  const beyond = asked.filter((scope) => !granted.has(scope));
  if (beyond.length > 0) throw new errors.InvalidScope("requested scope exceeds the subject token's scope", beyond.join(" "));
  return asked.join(" ");
}

/**
 * The provider's `extraTokenClaims`: it replaces a token's `extra` when saving it, so an
 * exchanged token's `act`, set when the grant made it, is handed back here. Other tokens have none.
 */
function exchangedTokenClaims(token: { gty?: string; extra?: Record<string, unknown> | undefined }): { act: Actor } | undefined {
  const act = token.gty === TOKEN_EXCHANGE_GRANT ? token.extra?.act : undefined;
  return act && typeof act === "object" ? { act: act as Actor } : undefined;
}

/** The audit entry of one exchange: the client acts, the person is the target. */
export function tokenExchangeAuditEntry(organizationId: string, record: TokenExchangeRecord): AuditRecord {
  const { clientId, accountId, ip, ...data } = record;
  return { eventType: "token.exchanged", organizationId, actorType: "client", actorId: clientId, targetType: "user", targetId: accountId, ip, data: { clientId, ...data } };
}

export interface DelegatedToken {
  client: Client;
  accountId: string;
  audience: string;
  scope: string;
  /** Seconds. */
  expiresIn: number;
  act: Actor | undefined;
}

/**
 * A person's access token for `client`, as an ES256 JWT like every access token of the
 * organization, stored like them (introspection, revocation). The one way both the token
 * exchange grant and an administrator's impersonation make a token that someone else acts with.
 */
export async function mintDelegatedToken(provider: Provider, input: DelegatedToken): Promise<{ token: AccessTokenInstance; value: string }> {
  const { client, accountId, audience, scope, expiresIn, act } = input;
  // No grant (the typings ask for one): the person's grants are other clients' (the provider
  // checks that a token's grant is its client's), so the token is bounded by its short lifetime.
  const fields = { client, accountId, gty: TOKEN_EXCHANGE_GRANT, scope: scope || undefined, expiresIn, ...(act ? { extra: { act } } : {}) };
  const token = new provider.AccessToken(fields as unknown as ConstructorParameters<Provider["AccessToken"]>[0]);
  token.resourceServer = {
    audience,
    scope,
    accessTokenFormat: "jwt",
    accessTokenTTL: expiresIn,
    jwt: { sign: { alg: "ES256" } },
  } as unknown as NonNullable<AccessTokenInstance["resourceServer"]>;
  return { token, value: await token.save() };
}

function registerTokenExchange(provider: Provider, options: TokenExchangeOptions): void {
  async function exchange(ctx: ExchangeContext): Promise<void> {
    const { client, params } = ctx.oidc;
    // The grant type is in a client's metadata only with audiences and a confidential client
    // (storage/client-metadata.ts); this holds even if a cached record disagreed.
    const allowed = tokenExchangeAudiencesOf(client);
    if (client.clientAuthMethod === "none" || allowed.length === 0) throw new errors.UnauthorizedClient("the client may not exchange tokens");

    const subjectValue = singleParam(params, "subject_token");
    if (!subjectValue) throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    const requestedType = singleParam(params, "requested_token_type");
    if (requestedType !== undefined && requestedType !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    const actorValue = singleParam(params, "actor_token");
    const actorType = singleParam(params, "actor_token_type");
    if (actorValue !== undefined && actorType !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest(`actor_token_type must be ${ACCESS_TOKEN_TYPE}`);
    if (actorValue === undefined && actorType !== undefined) throw new errors.InvalidRequest("actor_token_type is given without actor_token");
    const audience = targetOf(params, allowed);
    if (options.reservedAudiences.includes(audience)) throw new errors.InvalidTarget("tokens for this audience are not issued by token exchange");

    const subject = await personToken(provider, subjectValue);
    if (!subject) throw new errors.InvalidGrant("subject_token is invalid, expired or revoked");
    const account = await options.findAccount(ctx, subject.accountId);
    if (!account) throw new errors.InvalidGrant("the subject_token's account is no longer available");
    const actor = actorValue === undefined ? undefined : await actorSubOf(provider, actorValue);
    if (actorValue !== undefined && !actor) throw new errors.InvalidGrant("actor_token is invalid, expired or revoked");
    const scope = scopeOf(singleParam(params, "scope"), subject.scope);

    // The new actor heads the chain; those before it (the subject token's own act) follow (§4.1).
    const priorAct = actOf(subject);
    const act: Actor | undefined = actor ? { sub: actor, ...(priorAct ? { act: priorAct } : {}) } : priorAct;
    const expiresIn = Math.max(1, Math.min(EXCHANGED_TOKEN_MAX_SECONDS, (subject.exp ?? 0) - Math.floor(Date.now() / 1000)));

    const { token, value } = await mintDelegatedToken(provider, { client, accountId: subject.accountId, audience, scope, expiresIn, act });
    ctx.oidc.entity("AccessToken", token);

    await options.onExchanged({
      clientId: client.clientId,
      accountId: subject.accountId,
      subjectClientId: subject.clientId ?? client.clientId,
      act: act ?? null,
      audience,
      scope,
      expiresIn,
      ip: ctx.ip,
    });
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: token.tokenType,
      expires_in: expiresIn,
      ...(scope ? { scope } : {}),
    };
  }
  provider.registerGrantType(TOKEN_EXCHANGE_GRANT, exchange, PARAMETERS, ["audience", "resource"]);
}

/**
 * The grant at the token endpoint, for the clients whose metadata has it (storage/client-metadata.ts),
 * and the exchanged token's `act` kept when the provider saves it.
 */
export const tokenExchange: Feature = {
  name: "token-exchange",
  configuration: (input) => ({
    // The one `extraTokenClaims` of the provider: an exchanged token's `act`, and an
    // administration token's sign-in factors (adminTokenFactors, below).
    extraTokenClaims(ctx, token) {
      const claims = { ...exchangedTokenClaims(token), ...adminTokenFactors(ctx, token, input.adminApiResource) };
      return Object.keys(claims).length > 0 ? claims : undefined;
    },
  }),
  patches: [
    (provider, context) =>
      registerTokenExchange(provider, {
        findAccount: context.findAccount,
        reservedAudiences: context.adminApiResource ? [context.adminApiResource] : [],
        onExchanged: async (record) => context.onTokenExchanged?.(context.organization.id, record),
      }),
  ],
};

/**
 * An administration token carries how its holder signed in (RFC 8176 `amr`), so the door that
 * takes it can require a second factor or a passkey of an organization's administrators
 * (decision 090) without looking for the browser session. The factors are those of the sign-in
 * the authorization code or refresh token was issued for (oidc-provider keeps them on both).
 * Tokens for other resources are left as they are.
 */
function adminTokenFactors(ctx: KoaContextWithOIDC | undefined, token: { aud?: unknown }, adminResource: string | undefined): { amr: string[] } | undefined {
  if (!adminResource || !ctx?.oidc) return undefined;
  const audiences = Array.isArray(token.aud) ? token.aud : [token.aud];
  if (!audiences.includes(adminResource)) return undefined;
  const entities = ctx.oidc.entities as { AuthorizationCode?: { amr?: unknown }; RefreshToken?: { amr?: unknown }; DeviceCode?: { amr?: unknown } };
  const amr = entities.AuthorizationCode?.amr ?? entities.RefreshToken?.amr ?? entities.DeviceCode?.amr;
  return Array.isArray(amr) && amr.every((value) => typeof value === "string") ? { amr: amr as string[] } : undefined;
}
