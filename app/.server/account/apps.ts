import { z } from "zod";
import type { Prisma } from "~/generated/prisma/client";
import { parseMetadataDocumentClientId } from "~/schemas/client-metadata-document";
import { isRepresentableText } from "~/schemas/text";
import type { Context, StagedContext } from "../context";
import { getClientRecord } from "../directory/clients";
import { ACCOUNT_CLIENT_ID } from "../oidc/storage/account-client";
import { ORGANIZATION_CONSOLE_CLIENT_ID } from "../oidc/storage/organization-console-client";
import type { SignedIn } from "./session";

/**
 * The applications and agents a person has given access to, on the account page: one entry per
 * client, from the person's live grants (oidc-provider's Grant rows, one per sign-in), with the
 * scopes and API resources allowed. Revoking one ends every grant of the person at that client
 * and the access and refresh tokens issued under them, in the write that records the audit
 * entry; the client's next authorization asks for consent again, as nothing is remembered.
 */
export interface AccountAppView {
  clientId: string;
  name: string;
  /** The OpenID scopes allowed (openid, profile, email, offline_access…). */
  scopes: string[];
  /** The API resources allowed, with their names where the organization still has them. */
  resources: Array<{ identifier: string; name: string | null; scopes: string[] }>;
  /** When access was last given (the newest grant). */
  grantedAt: string;
}

/**
 * What the page reads of a stored Grant (oidc-provider's payload): the client, the scopes and
 * resources given and those refused. A row that does not have this shape is left out.
 */
const GrantPayloadSchema = z.looseObject({
  clientId: z.string().optional(),
  openid: z.looseObject({ scope: z.string().optional() }).optional(),
  resources: z.record(z.string(), z.unknown()).optional(),
  rejected: z
    .looseObject({
      openid: z.looseObject({ scope: z.string().optional() }).optional(),
      resources: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});

const words = (value: string | undefined) => (value ? value.split(" ").filter(Boolean) : []);
const union = (into: Set<string>, values: string[]) => values.forEach((v) => into.add(v));

/** The rows a person's access at `clientId` (or at every client) consists of: its grants and the tokens issued under them. */
function accessRowsWhere(access: SignedIn, clientId?: string): Prisma.OidcPayloadWhereInput {
  return {
    organizationId: access.organization.id,
    accountId: access.user.id,
    model: { in: ["Grant", "AccessToken", "RefreshToken"] },
    ...(clientId === undefined ? {} : { payload: { path: ["clientId"], equals: clientId } }),
  };
}

export async function listAccountApps(ctx: Context<"cache">, access: SignedIn): Promise<AccountAppView[]> {
  const rows = await ctx.db.oidcPayload.findMany({
    where: { ...accessRowsWhere(access), model: "Grant", OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    select: { payload: true, createdAt: true },
    orderBy: { createdAt: "desc" },
    take: 500,
  });
  const byClient = new Map<string, { scopes: Set<string>; resources: Map<string, Set<string>>; grantedAt: Date }>();
  for (const row of rows) {
    const parsed = GrantPayloadSchema.safeParse(row.payload);
    if (!parsed.success) continue;
    const payload = parsed.data;
    const createdAt = row.createdAt;
    const clientId = payload.clientId;
    // The built-in clients of the account page and the organization console are no one's app to revoke.
    if (typeof clientId !== "string" || clientId === ACCOUNT_CLIENT_ID || clientId === ORGANIZATION_CONSOLE_CLIENT_ID) continue;
    const entry = byClient.get(clientId) ?? { scopes: new Set<string>(), resources: new Map<string, Set<string>>(), grantedAt: createdAt };
    byClient.set(clientId, entry);
    const rejected = new Set(words(payload.rejected?.openid?.scope));
    union(entry.scopes, words(payload.openid?.scope).filter((s) => !rejected.has(s)));
    for (const [identifier, scope] of Object.entries(payload.resources ?? {})) {
      const refused = new Set(words(payload.rejected?.resources?.[identifier]));
      const allowed = words(typeof scope === "string" ? scope : undefined).filter((s) => !refused.has(s));
      if (allowed.length === 0) continue;
      const scopes = entry.resources.get(identifier) ?? new Set<string>();
      union(scopes, allowed);
      entry.resources.set(identifier, scopes);
    }
  }
  if (byClient.size === 0) return [];
  const identifiers = [...new Set([...byClient.values()].flatMap((e) => [...e.resources.keys()]))];
  const [clients, named] = await Promise.all([
    Promise.all([...byClient.keys()].map((id) => getClientRecord(ctx.db, ctx.cache, id))),
    identifiers.length === 0
      ? []
      : ctx.db.apiResource.findMany({ where: { organizationId: access.organization.id, identifier: { in: identifiers } }, select: { identifier: true, name: true } }),
  ]);
  const nameOf = new Map(named.map((r) => [r.identifier, r.name]));
  return [...byClient.entries()].flatMap(([clientId, entry], i) => {
    const client = clients[i];
    // A client known by its metadata document's URL is named by the domain it came from.
    const documentDomain = client ? null : (parseMetadataDocumentClientId(clientId)?.hostname ?? null);
    // A grant outliving its client (deleted, or not this organization's) is nothing to show or revoke.
    if (documentDomain === null && (!client || client.organizationId !== access.organization.id)) return [];
    return [
      {
        clientId,
        name: client?.name ?? documentDomain!,
        scopes: [...entry.scopes].sort(),
        resources: [...entry.resources.entries()].map(([identifier, scopes]) => ({ identifier, name: nameOf.get(identifier) ?? null, scopes: [...scopes].sort() })),
        grantedAt: entry.grantedAt.toISOString(),
      },
    ];
  });
}

export type RevokeAppOutcome = { ok: true } | { ok: false; reason: "not_found" };

/** Ends the person's access at one client: every grant and every access and refresh token. */
export async function revokeAccountApp(staged: StagedContext, access: SignedIn, clientId: string): Promise<RevokeAppOutcome> {
  // No client has such an id; PostgreSQL could not even compare a NUL or a lone surrogate.
  if (clientId === "" || clientId.length > 255 || clientId === ACCOUNT_CLIENT_ID || clientId === ORGANIZATION_CONSOLE_CLIENT_ID || !isRepresentableText(clientId)) return { ok: false, reason: "not_found" };
  return staged.transaction(async (ctx) => {
    const { count } = await ctx.db.oidcPayload.deleteMany({ where: accessRowsWhere(access, clientId) });
    if (count === 0) return { ok: false as const, reason: "not_found" as const };
    ctx.audit({ eventType: "account.app_access.revoked", organizationId: access.organization.id, targetType: "user", targetId: access.user.id, data: { clientId } });
    return { ok: true as const };
  });
}
