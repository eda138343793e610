import type { KoaContextWithOIDC } from "oidc-provider";
import type Provider from "oidc-provider";
import type { Database } from "../../db/client";

/**
 * One grant per sign-in (decision 017): a grant belongs to one browser session of the provider and
 * one client, as oidc-provider records it in the session. oidc-provider revokes a token's whole
 * grant, so a grant shared by every sign-in of an account at a client would let one logout or
 * one revoked refresh token end every device. Consent is remembered per account and client all
 * the same: a sign-in that has no grant of its own yet gets a new one carrying what the account
 * already allowed the client in its other live grants.
 */
export type Grant = InstanceType<Provider["Grant"]>;

/** What a grant records as allowed (its stored payload and a Grant instance both have this shape). */
export type GrantConsent = Pick<Grant, "openid" | "resources" | "rejected">;

/** Remembered consent reads at most this many of an account's grants for one client, newest first. */
const REMEMBERED_GRANTS = 50;

const words = (value: string | undefined) => (value ? value.split(" ").filter(Boolean) : []);
const without = (values: string[], removed: string[]) => values.filter((v) => !removed.includes(v));

/** Adds what `source` allowed (never what it rejected) to `target`. */
export function addConsent(target: Grant, source: GrantConsent): void {
  const scopes = without(words(source.openid?.scope), words(source.rejected?.openid?.scope));
  if (scopes.length > 0) target.addOIDCScope(scopes);
  const claims = without(source.openid?.claims ?? [], source.rejected?.openid?.claims ?? []);
  if (claims.length > 0) target.addOIDCClaims(claims);
  for (const [resource, scope] of Object.entries(source.resources ?? {})) {
    const allowed = without(words(scope), words(source.rejected?.resources?.[resource]));
    if (allowed.length > 0) target.addResourceScope(resource, allowed);
  }
}

const isEmpty = (grant: Grant) => !grant.openid && !grant.resources;

/**
 * The consent stored in the account's live grants for the client, newest first. Plain SQL, as
 * the rest of the grant rows (decision 057): every returning sign-in reads it.
 */
async function rememberedConsent(sql: Pick<Database, "query">, organizationId: string, accountId: string, clientId: string): Promise<GrantConsent[]> {
  const rows = await sql.query<{ payload: GrantConsent }>(
    `SELECT "payload" FROM "OidcPayload"
      WHERE "model" = 'Grant' AND "organizationId" = $1::uuid AND "accountId" = $2 AND "payload"->>'clientId' = $3
        AND ("expiresAt" IS NULL OR "expiresAt" > now())
      ORDER BY "createdAt" DESC LIMIT ${REMEMBERED_GRANTS}`,
    [organizationId, accountId, clientId],
  );
  return rows.map((row) => row.payload);
}

/**
 * oidc-provider's `loadExistingGrant`, per organization: the grant an authorization continues.
 * 1. The grant the consent step of this authorization recorded.
 * 2. The grant of this sign-in (the provider session's grant for the client), while it lives.
 * 3. Otherwise a new grant for this sign-in with the consent remembered from the account's other
 *    grants for the client, saved now because the authorization code refers to it by id; none
 *    when nothing is remembered (the consent prompt then creates the grant). Native clients are
 *    asked for consent at every authorization anyway (oidc-provider's native_client_prompt), so
 *    their consent step creates the grant and nothing is copied here in advance.
 */
export function createLoadExistingGrant(sql: Pick<Database, "query">, organizationId: string) {
  return async function loadExistingGrant(ctx: KoaContextWithOIDC): Promise<Grant | undefined> {
    const { provider, session } = ctx.oidc;
    const client = ctx.oidc.client!;
    const accountId = session!.accountId;
    const ownGrant = async (grantId: string | undefined) => {
      const grant = grantId ? await provider.Grant.find(grantId) : undefined;
      return grant && grant.accountId === accountId && grant.clientId === client.clientId ? grant : undefined;
    };

    const recorded = (ctx.oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId;
    if (recorded) return ownGrant(recorded);
    const current = await ownGrant(session!.grantIdFor(client.clientId));
    if (current || !accountId || client.applicationType === "native") return current;

    const grant = new provider.Grant({ accountId, clientId: client.clientId });
    for (const consent of await rememberedConsent(sql, organizationId, accountId, client.clientId)) addConsent(grant, consent);
    if (isEmpty(grant)) return undefined;
    await grant.save();
    return grant;
  };
}
