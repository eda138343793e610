import type {
  ApplicationConfig,
  BrandingConfig,
  ClaimConfig,
  ClientConfig,
  IdentityProviderConfig,
  OrganizationConfig,
  PermissionConfig,
  RoleConfig,
  WebhookConfig,
} from "./schema";
import type { OrganizationState } from "./state";

/**
 * The difference between what the file says and what the server has, field by field: a pure
 * function of the two, so that `porta plan` shows exactly what `porta apply` then does. Entities
 * are matched by their natural keys; a field the file leaves out is not compared.
 */
export type OrganizationFields = Pick<OrganizationConfig, "slug" | "name" | "defaultLoginMethods" | "twoFactorPolicy" | "defaultLocale" | "oauth21" | "botChallenge" | "botChallengeCost">;

interface Kinds {
  organization: OrganizationFields;
  branding: BrandingConfig;
  permission: PermissionConfig;
  role: RoleConfig;
  application: ApplicationConfig;
  claim: ClaimConfig & { application: string };
  client: ClientConfig;
  identityProvider: IdentityProviderConfig;
  webhook: WebhookConfig;
}
export type Kind = keyof Kinds;

export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** One write of the plan. `id` and `etag` are the entity's as read (absent for a creation). */
export type Change = {
  [K in Kind]: {
    action: "create" | "update" | "delete";
    kind: K;
    organization: string;
    key: string;
    id?: string;
    /** The application a claim belongs to, by id (when the application exists already). */
    parentId?: string;
    etag?: string;
    fields: FieldChange[];
    desired?: Kinds[K];
  };
}[Kind];

export interface Plan {
  changes: Change[];
  /** What `--prune` would delete: entities of managed kinds the file no longer has. */
  prunable: Change[];
  /** What the file asks that the Admin API cannot do (a client's type, a role's deletion…). */
  warnings: string[];
  /** What stops the plan from being applied: a reference to something the organization would not have. */
  problems: string[];
}

/** Fields compared as sets: the server keeps no meaningful order for them. */
const SET_FIELDS = new Set([
  "defaultLoginMethods",
  "loginMethods",
  "grantTypes",
  "redirectUris",
  "postLogoutRedirectUris",
  "allowedCorsOrigins",
  "tokenExchangeAudiences",
  "scopes",
  "domains",
  "eventTypes",
  "permissions",
]);

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  return value;
}

export function sameValue(field: string, a: unknown, b: unknown): boolean {
  if (field === "scope" && typeof a === "string" && typeof b === "string") return a.split(/\s+/).filter(Boolean).sort().join(" ") === b.split(/\s+/).filter(Boolean).sort().join(" ");
  if (SET_FIELDS.has(field) && Array.isArray(a) && Array.isArray(b)) return JSON.stringify([...new Set(a.map(String))].sort()) === JSON.stringify([...new Set(b.map(String))].sort());
  return JSON.stringify(canonical(a ?? null)) === JSON.stringify(canonical(b ?? null));
}

/** The fields the file sets that differ from the server's. */
function diff(desired: object, current: Record<string, unknown>, skip: readonly string[] = []): FieldChange[] {
  const out: FieldChange[] = [];
  for (const [field, to] of Object.entries(desired)) {
    if (to === undefined || skip.includes(field)) continue;
    const from = current[field];
    if (!sameValue(field, from, to)) out.push({ field, from: from ?? null, to });
  }
  return out;
}

/** A creation shows every field the file sets. */
function created(desired: object, skip: readonly string[] = []): FieldChange[] {
  return Object.entries(desired)
    .filter(([field, to]) => to !== undefined && !skip.includes(field))
    .map(([field, to]) => ({ field, from: null, to }));
}

const MICROSOFT_ISSUER = /^https:\/\/login\.microsoftonline\.com\/([^/]+)\/v2\.0$/;
/** The Entra ID tenant a microsoft provider's issuer names. */
export const tenantOf = (issuer: string): string | undefined => MICROSOFT_ISSUER.exec(issuer)?.[1];

/** A provider as the file would say it (`tenantId` for microsoft, `clientSecret` as whether one is set). */
function providerFields(live: OrganizationState["identityProviders"][number]["data"]): Record<string, unknown> {
  return { ...live, tenantId: live.kind === "microsoft" ? tenantOf(live.issuer) : undefined };
}

/** Pairs the file's entities with the server's by key: matched, only in the file, only on the server. */
function match<T, L>(desired: T[], live: L[], keyOfDesired: (d: T) => string, keyOfLive: (l: L) => string) {
  const byKey = new Map<string, L[]>();
  for (const l of live) byKey.set(keyOfLive(l), [...(byKey.get(keyOfLive(l)) ?? []), l]);
  const wanted = new Set(desired.map(keyOfDesired));
  return {
    pairs: desired.map((d) => ({ key: keyOfDesired(d), desired: d, live: byKey.get(keyOfDesired(d)) ?? [] })),
    extra: live.filter((l) => !wanted.has(keyOfLive(l))),
  };
}

export function planOrganization(desired: OrganizationConfig, current: OrganizationState | undefined, secrets: ReadonlyMap<string, string> = new Map()): Plan {
  const org = desired.slug;
  const changes: Change[] = [];
  const prunable: Change[] = [];
  const warnings: string[] = [];
  const problems: string[] = [];
  const { branding, permissions, roles, applications, clients, identityProviders, webhooks, ...orgFields } = desired;

  // The organization and its settings (login methods, 2FA policy, locale, OAuth 2.1).
  if (!current) {
    changes.push({ action: "create", kind: "organization", organization: org, key: org, fields: created(orgFields, ["slug"]), desired: orgFields });
  } else {
    const fields = diff(orgFields, current.organization.data, ["slug"]);
    if (fields.length > 0)
      changes.push({ action: "update", kind: "organization", organization: org, key: org, id: current.organization.data.id, etag: current.organization.etag, fields, desired: orgFields });
  }

  if (branding) {
    const fields = current ? diff(branding, current.branding.data) : created(branding).filter((f) => f.to !== null);
    if (fields.length > 0) changes.push({ action: "update", kind: "branding", organization: org, key: org, etag: current?.branding.etag, fields, desired: branding });
  }

  const duplicate = (what: string, key: string) => warnings.push(`${org}: the server has several ${what}s named "${key}"; the file cannot tell them apart, so none of them is changed.`);

  if (permissions) {
    const { pairs, extra } = match(permissions, current?.permissions ?? [], (p) => p.name, (p) => p.name);
    for (const { key, desired: p, live } of pairs) {
      if (live.length > 1) duplicate("permission", key);
      else if (live.length === 0) changes.push({ action: "create", kind: "permission", organization: org, key, fields: created(p, ["name"]), desired: p });
      else if (p.description !== undefined && !sameValue("description", live[0]!.description, p.description))
        warnings.push(`${org}: permission "${key}" has the description ${JSON.stringify(live[0]!.description)}; the Admin API cannot change a permission's description (delete it and create it again to change it).`);
    }
    for (const p of extra) prunable.push({ action: "delete", kind: "permission", organization: org, key: p.name, id: p.id, fields: [] });
  }

  // When the file manages a kind, a reference must be to one the file keeps (prune would delete the others).
  const knownPermissions = new Set(permissions ? permissions.map((p) => p.name) : (current?.permissions ?? []).map((p) => p.name));
  for (const r of roles ?? [])
    for (const p of r.permissions ?? []) if (!knownPermissions.has(p)) problems.push(`${org}: role "${r.name}" names the permission "${p}", which the organization would not have.`);
  const knownApplications = new Set(applications ? applications.map((a) => a.name) : (current?.applications ?? []).map((a) => a.data.name));
  for (const c of clients ?? [])
    if (c.application && !knownApplications.has(c.application)) problems.push(`${org}: client "${c.name}" names the application "${c.application}", which the organization would not have.`);

  if (roles) {
    const { pairs, extra } = match(roles, current?.roles ?? [], (r) => r.name, (r) => r.data.name);
    for (const { key, desired: r, live } of pairs) {
      if (live.length > 1) duplicate("role", key);
      else if (live.length === 0) changes.push({ action: "create", kind: "role", organization: org, key, fields: created(r, ["name"]), desired: r });
      else {
        const l = live[0]!;
        const fields = diff(r, { ...l.data, permissions: l.data.permissions.map((p) => p.name) }, ["name"]);
        if (fields.length > 0) changes.push({ action: "update", kind: "role", organization: org, key, id: l.data.id, etag: l.etag, fields, desired: r });
      }
    }
    for (const r of extra) warnings.push(`${org}: role "${r.data.name}" is not in the file; the Admin API cannot delete roles, so --prune leaves it.`);
  }

  if (applications) {
    const { pairs, extra } = match(applications, current?.applications ?? [], (a) => a.name, (a) => a.data.name);
    for (const { key, desired: a, live } of pairs) {
      if (live.length > 1) {
        duplicate("application", key);
        continue;
      }
      const l = live[0];
      const { claims, ...appFields } = a;
      if (!l) changes.push({ action: "create", kind: "application", organization: org, key, fields: created(appFields, ["name"]), desired: a });
      else {
        const fields = diff(appFields, l.data, ["name"]);
        if (fields.length > 0) changes.push({ action: "update", kind: "application", organization: org, key, id: l.data.id, etag: l.etag, fields, desired: a });
      }
      if (!claims) continue;
      const claimMatch = match(claims, l?.claims ?? [], (c) => c.claimName, (c) => c.claimName);
      for (const { key: claimName, desired: c, live: lc } of claimMatch.pairs) {
        const claimKey = `${key} › ${claimName}`;
        const claim = { ...c, application: key };
        if (lc.length === 0) changes.push({ action: "create", kind: "claim", organization: org, key: claimKey, parentId: l?.data.id, fields: created(c, ["claimName"]), desired: claim });
        else {
          const fields = diff(c, lc[0]!, ["claimName"]);
          if (fields.length > 0) changes.push({ action: "update", kind: "claim", organization: org, key: claimKey, id: lc[0]!.id, parentId: l?.data.id, fields, desired: claim });
        }
      }
      for (const c of claimMatch.extra) prunable.push({ action: "delete", kind: "claim", organization: org, key: `${key} › ${c.claimName}`, id: c.id, parentId: l?.data.id, fields: [] });
    }
    for (const a of extra) prunable.push({ action: "delete", kind: "application", organization: org, key: a.data.name, id: a.data.id, etag: a.etag, fields: [] });
  }

  if (clients) {
    const appNames = new Map((current?.applications ?? []).map((a) => [a.data.id, a.data.name]));
    const { pairs, extra } = match(clients, current?.clients ?? [], (c) => c.name, (c) => c.data.name);
    for (const { key, desired: c, live } of pairs) {
      if (live.length > 1) duplicate("client", key);
      else if (live.length === 0) changes.push({ action: "create", kind: "client", organization: org, key, fields: created(c, ["name"]), desired: c });
      else {
        const l = live[0]!;
        const application = l.data.applicationId ? (appNames.get(l.data.applicationId) ?? l.data.applicationId) : null;
        const skip = ["name", "clientType", ...(l.data.clientType === "public" ? ["tokenEndpointAuthMethod"] : [])];
        const fields = diff(c, { ...l.data, application }, skip);
        if (c.clientType !== l.data.clientType) warnings.push(`${org}: client "${key}" is ${l.data.clientType} on the server; a client's type is fixed at creation (delete it and create it again to change it).`);
        if (fields.length > 0) changes.push({ action: "update", kind: "client", organization: org, key, id: l.data.id, etag: l.etag, fields, desired: c });
      }
    }
    for (const c of extra) prunable.push({ action: "delete", kind: "client", organization: org, key: c.data.name, id: c.data.id, etag: c.etag, fields: [] });
  }

  if (identityProviders) {
    const { pairs, extra } = match(identityProviders, current?.identityProviders ?? [], (p) => p.name, (p) => p.data.name);
    for (const { key, desired: p, live } of pairs) {
      const secret = p.clientSecret ? `$${p.clientSecret.fromEnv}` : p.clientSecret;
      if (p.clientSecret && !secrets.has(p.clientSecret.fromEnv)) throw new Error(`the secret ${p.clientSecret.fromEnv} was not loaded`);
      if (live.length === 0) {
        const fields = created(p, ["name", "clientSecret"]);
        if (secret) fields.push({ field: "clientSecret", from: null, to: secret });
        changes.push({ action: "create", kind: "identityProvider", organization: org, key, fields, desired: p });
        continue;
      }
      const l = live[0]!;
      if (p.kind !== l.data.kind) {
        warnings.push(`${org}: identity provider "${key}" is a ${l.data.kind} provider on the server; its kind is fixed at creation (delete it and create it again to change it).`);
        continue;
      }
      const fields = diff(p, providerFields(l.data), ["name", "kind", "clientSecret"]);
      // A secret cannot be read back: it is set when the provider has none, and removed by null.
      if (p.clientSecret && !l.data.hasClientSecret) fields.push({ field: "clientSecret", from: null, to: secret });
      if (p.clientSecret === null && l.data.hasClientSecret) fields.push({ field: "clientSecret", from: "(set)", to: null });
      if (fields.length > 0) changes.push({ action: "update", kind: "identityProvider", organization: org, key, id: l.data.id, etag: l.etag, fields, desired: p });
    }
    for (const p of extra) prunable.push({ action: "delete", kind: "identityProvider", organization: org, key: p.data.name, id: p.data.id, etag: p.etag, fields: [] });
  }

  if (webhooks) {
    const { pairs, extra } = match(webhooks, current?.webhooks ?? [], (w) => w.url, (w) => w.data.url);
    for (const { key, desired: w, live } of pairs) {
      if (live.length > 1) duplicate("webhook", key);
      else if (live.length === 0) changes.push({ action: "create", kind: "webhook", organization: org, key, fields: created(w, ["url"]), desired: w });
      else {
        const fields = diff(w, live[0]!.data, ["url"]);
        if (fields.length > 0) changes.push({ action: "update", kind: "webhook", organization: org, key, id: live[0]!.data.id, etag: live[0]!.etag, fields, desired: w });
      }
    }
    for (const w of extra) prunable.push({ action: "delete", kind: "webhook", organization: org, key: w.data.url, id: w.data.id, etag: w.etag, fields: [] });
  }

  // What --prune leaves because the file cannot describe it.
  if (identityProviders && current?.unmanaged.samlConnections.length)
    warnings.push(`${org}: SAML connections are not part of the file and stay as they are: ${current.unmanaged.samlConnections.map((n) => `"${n}"`).join(", ")}.`);
  if (clients && current?.unmanaged.registeredClients.length)
    warnings.push(`${org}: self-registered clients manage themselves and stay as they are: ${current.unmanaged.registeredClients.map((n) => `"${n}"`).join(", ")}.`);

  return { changes, prunable, warnings, problems };
}

/** Deletions run after every creation and update, dependents first (an application refuses deletion while it has clients). */
export const DELETE_ORDER: readonly Kind[] = ["webhook", "identityProvider", "client", "claim", "application", "role", "permission"];
