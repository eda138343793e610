import type { Operations, PortaAdmin } from "@porta/admin-client";

/**
 * What an organization holds on the server, read through the Admin API with each entity's ETag,
 * so that `porta apply` writes with If-Match the versions its plan was made from.
 */
type Response<Id extends keyof Operations> = Operations[Id]["response"];

export type LiveOrganization = Response<"organizations.get">;
export type LiveBranding = Response<"branding.getSettings">;
export type LivePermission = Response<"permissions.get">;
export type LiveRole = Response<"roles.get">;
export type LiveApplication = Response<"applications.get">;
export type LiveClaim = Response<"customClaims.list">["data"][number];
export type LiveClient = Response<"clients.get">;
export type LiveIdentityProvider = Response<"identityProviders.get">;
export type LiveWebhook = Response<"webhooks.get">;

/** An entity as read, with the ETag to send back (empty when the operation has none). */
export interface Live<T> {
  data: T;
  etag: string;
}

export interface OrganizationState {
  organization: Live<LiveOrganization>;
  branding: Live<LiveBranding>;
  permissions: LivePermission[];
  roles: Array<Live<LiveRole>>;
  applications: Array<Live<LiveApplication> & { claims: LiveClaim[] }>;
  /** Clients an administrator manages: not self-registered ones (they manage themselves, RFC 7592). */
  clients: Array<Live<LiveClient>>;
  /** Upstream OpenID Connect and OAuth providers; SAML connections are not part of the file. */
  identityProviders: Array<Live<LiveIdentityProvider>>;
  webhooks: Array<Live<LiveWebhook>>;
  /** What the organization has that the file does not describe, by name: SAML connections, self-registered clients. */
  unmanaged: { samlConnections: string[]; registeredClients: string[] };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Reads at most a few entities at a time: an organization with hundreds of clients must not meet the Admin API's rate limits all at once. */
async function mapLimited<T, R>(items: T[], read: (item: T) => Promise<R>, limit = 8): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await read(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The organization with this slug, if there is one (not a deleted one). */
export async function findOrganization(client: PortaAdmin, slug: string): Promise<LiveOrganization | undefined> {
  for await (const org of client.organizations.listAll({ q: slug })) if (org.slug === slug && org.status !== "deleted") return org;
  return undefined;
}

/** Everything of the organization the file can describe, each entity re-read on its own for its ETag. */
export async function readOrganization(client: PortaAdmin, slug: string): Promise<OrganizationState | undefined> {
  const found = await findOrganization(client, slug);
  if (!found) return undefined;
  const organizationId = found.id;
  const [organization, branding, permissions, roleList, applicationList, clientList, providerList, webhookList] = await Promise.all([
    client.organizations.get(organizationId),
    client.branding.getSettings(organizationId),
    all(client.permissions.listAll({ organizationId })),
    all(client.roles.listAll({ organizationId })),
    all(client.applications.listAll({ organizationId })),
    all(client.clients.listAll({ organizationId })),
    all(client.identityProviders.listAll({ organizationId })),
    all(client.webhooks.listAll(organizationId)),
  ]);
  // The organization's own administration roles come with it: Porta keeps them, the file does not.
  const roles = await mapLimited(
    roleList.filter((r) => !r.builtIn),
    (r) => client.roles.get(r.id),
  );
  const applications = await mapLimited(applicationList, async (a) => {
    const [live, claims] = await Promise.all([client.applications.get(a.id), all(client.customClaims.listAll(a.id))]);
    return { ...live, claims };
  });
  const clients = await mapLimited(
    clientList.filter((c) => !c.dynamicallyRegistered && !c.adminApiAccess),
    (c) => client.clients.get(c.id),
  );
  const identityProviders = await mapLimited(
    providerList.filter((p) => p.kind !== "saml"),
    (p) => client.identityProviders.get(p.id),
  );
  const webhooks = await mapLimited(webhookList, (w) => client.webhooks.get(organizationId, w.id));
  const unmanaged = {
    samlConnections: providerList.filter((p) => p.kind === "saml").map((p) => p.name),
    registeredClients: clientList.filter((c) => c.dynamicallyRegistered).map((c) => c.name),
  };
  return { organization, branding, permissions, roles, applications, clients, identityProviders, webhooks, unmanaged };
}
