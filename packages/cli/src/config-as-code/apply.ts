import { PortaError, type PortaAdmin } from "@porta/admin-client";
import { DELETE_ORDER, type Change, type FieldChange, type Plan } from "./plan";
import type { IdentityProviderConfig } from "./schema";
import type { OrganizationState } from "./state";

/**
 * Makes a plan's changes through the Admin API, in an order that lets references resolve
 * (permissions before the roles that hold them, applications before their clients), deletions
 * last. Each entity's first write carries If-Match with the ETag its plan read: when someone
 * changed the entity since, the server refuses and apply stops there, naming the entity. A
 * deletion carries it too; permissions and claims have no versions, so their writes are unguarded.
 */
export interface OrganizationPlan {
  slug: string;
  state: OrganizationState | undefined;
  plan: Plan;
}

/** A value the server showed once at a creation (a confidential client's or a webhook's secret). */
export interface IssuedSecret {
  organization: string;
  kind: "client" | "webhook";
  key: string;
  id: string;
  secret: string;
}

export interface ApplyOptions {
  prune: boolean;
  secrets: ReadonlyMap<string, string>;
  /** Called after each change is made. */
  onApplied?: (change: Change) => void;
  onSecret?: (secret: IssuedSecret) => void;
}

/** Apply stopped: an entity changed since the plan read it, or the server refused a write. */
export class ApplyStoppedError extends Error {
  constructor(
    message: string,
    readonly change: Change,
    readonly failure: PortaError,
  ) {
    super(message);
  }
}

const CREATE_ORDER: readonly Change["kind"][] = ["organization", "branding", "permission", "role", "application", "claim", "client", "identityProvider", "webhook"];

/**
 * A failed Admin API call. By shape rather than class, so that a caller with its own copy of the
 * client library (a test importing its source) is understood too.
 */
const isPortaError = (error: unknown): error is PortaError =>
  error instanceof PortaError || (error instanceof Error && typeof (error as Partial<PortaError>).status === "number" && typeof (error as Partial<PortaError>).code === "string");

const isStale = (error: unknown) => isPortaError(error) && (error.status === 412 || error.code === "etag_mismatch");

const label = (c: Change) =>
  c.kind === "organization" ? `organization "${c.key}"` : `${c.kind === "identityProvider" ? "identity provider" : c.kind} "${c.key}" of organization "${c.organization}"`;

/** The changed fields' new values, as an update's body. */
function changed(fields: FieldChange[], leave: readonly string[] = []): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => !leave.includes(f.field)).map((f) => [f.field, f.to]));
}

const definedOnly = <T extends Record<string, unknown>>(value: T) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

const MICROSOFT_ISSUER = (tenant: string) => `https://login.microsoftonline.com/${tenant}/v2.0`;

/** The provider's fields as the Admin API takes them: nulls the create body has no room for are left out. */
function providerBody(p: Partial<IdentityProviderConfig>, secrets: ReadonlyMap<string, string>): Record<string, unknown> {
  const { clientSecret, endpoints, teamId, keyId, ...rest } = p;
  return definedOnly({
    ...rest,
    ...(clientSecret !== undefined ? { clientSecret: clientSecret === null ? null : secrets.get(clientSecret.fromEnv) } : {}),
    ...(endpoints ? { endpoints } : {}),
    ...(teamId ? { teamId } : {}),
    ...(keyId ? { keyId } : {}),
  });
}

class OrganizationApplier {
  organizationId: string | undefined;
  readonly permissionIds: Map<string, string>;
  readonly applicationIds: Map<string, string>;

  constructor(
    private readonly client: PortaAdmin,
    private readonly target: OrganizationPlan,
    private readonly options: ApplyOptions,
  ) {
    this.organizationId = target.state?.organization.data.id;
    this.permissionIds = new Map((target.state?.permissions ?? []).map((p) => [p.name, p.id]));
    this.applicationIds = new Map((target.state?.applications ?? []).map((a) => [a.data.name, a.data.id]));
  }

  private get orgId(): string {
    if (!this.organizationId) throw new Error(`organization "${this.target.slug}" does not exist yet`);
    return this.organizationId;
  }

  private permissionId(name: string): string {
    const id = this.permissionIds.get(name);
    if (!id) throw new Error(`permission "${name}" of organization "${this.target.slug}" is unknown`);
    return id;
  }

  private applicationId(name: string | null | undefined): string | null | undefined {
    if (name === undefined || name === null) return name;
    const id = this.applicationIds.get(name);
    if (!id) throw new Error(`application "${name}" of organization "${this.target.slug}" is unknown`);
    return id;
  }

  /** A status change after the create or update; the etag is the one the previous write answered. */
  private async setStatus(ns: "applications" | "clients", id: string, status: "active" | "inactive" | undefined, current: string | undefined, etag: string | undefined): Promise<void> {
    if (status === undefined || status === current) return;
    const options = etag ? { ifMatch: etag } : {};
    if (status === "inactive") await this.client[ns].deactivate(id, options);
    else await this.client[ns].activate(id, options);
  }

  async apply(change: Change): Promise<void> {
    const c = this.client;
    const ifMatch = change.etag ? { ifMatch: change.etag } : {};
    switch (change.kind) {
      case "organization": {
        const { slug, name, ...rest } = change.desired!;
        if (change.action === "create") {
          const created = await c.organizations.create({ slug, name: name ?? slug, ...definedOnly(rest) });
          this.organizationId = created.data.id;
        } else {
          await c.organizations.update(change.id!, changed(change.fields), ifMatch);
        }
        return;
      }
      case "branding": {
        await c.branding.updateSettings(this.orgId, changed(change.fields), ifMatch);
        return;
      }
      case "permission": {
        if (change.action === "delete") {
          await c.permissions.delete(change.id!);
          return;
        }
        const p = change.desired!;
        const created = await c.permissions.create({ organizationId: this.orgId, name: p.name, ...(typeof p.description === "string" ? { description: p.description } : {}) });
        this.permissionIds.set(created.name, created.id);
        return;
      }
      case "role": {
        const r = change.desired!;
        if (change.action === "create") {
          await c.roles.create({
            organizationId: this.orgId,
            name: r.name,
            ...(typeof r.description === "string" ? { description: r.description } : {}),
            ...(r.permissions ? { permissionIds: r.permissions.map((p) => this.permissionId(p)) } : {}),
          });
          return;
        }
        let etag = change.etag;
        const simple = changed(change.fields, ["permissions"]);
        if (Object.keys(simple).length > 0) etag = (await c.roles.update(change.id!, simple, ifMatch)).etag;
        const permissions = change.fields.find((f) => f.field === "permissions");
        if (permissions) {
          const from = new Set(permissions.from as string[]);
          const to = new Set(permissions.to as string[]);
          for (const name of to) {
            if (from.has(name)) continue;
            etag = (await c.roles.assignPermission(change.id!, this.permissionId(name), etag ? { ifMatch: etag } : {})).etag;
          }
          for (const name of from) {
            if (to.has(name)) continue;
            await c.roles.removePermission(change.id!, this.permissionId(name), etag ? { ifMatch: etag } : {});
            etag = undefined;
          }
        }
        return;
      }
      case "application": {
        if (change.action === "delete") {
          await c.applications.delete(change.id!, ifMatch);
          return;
        }
        const a = change.desired!;
        if (change.action === "create") {
          const created = await c.applications.create({ organizationId: this.orgId, name: a.name, ...(a.description !== undefined ? { description: a.description } : {}) });
          this.applicationIds.set(a.name, created.data.id);
          await this.setStatus("applications", created.data.id, a.status, created.data.status, created.etag);
          return;
        }
        const body = changed(change.fields, ["status"]);
        const current = this.target.state?.applications.find((l) => l.data.id === change.id)?.data.status;
        let etag = change.etag;
        if (Object.keys(body).length > 0) etag = (await c.applications.update(change.id!, body, ifMatch)).etag;
        await this.setStatus("applications", change.id!, a.status, current, etag);
        return;
      }
      case "claim": {
        const appId = change.parentId ?? this.applicationIds.get(change.desired?.application ?? "");
        if (!appId) throw new Error(`the application of claim "${change.key}" is unknown`);
        if (change.action === "delete") {
          await c.customClaims.delete(appId, change.id!);
          return;
        }
        const { application: _application, ...claim } = change.desired!;
        if (change.action === "create") await c.customClaims.create(appId, definedOnly(claim) as typeof claim);
        else await c.customClaims.update(appId, change.id!, changed(change.fields));
        return;
      }
      case "client": {
        if (change.action === "delete") {
          await c.clients.delete(change.id!, ifMatch);
          return;
        }
        const { application, status, ...rest } = change.desired!;
        if (change.action === "create") {
          const { tokenEndpointAuthMethod, loginMethods, ...fields } = rest;
          const created = await c.clients.create({
            ...definedOnly(fields),
            // null (follow the organization's) is what a new client has already.
            ...(loginMethods ? { loginMethods } : {}),
            name: rest.name,
            clientType: rest.clientType,
            ...(rest.clientType === "confidential" && tokenEndpointAuthMethod ? { tokenEndpointAuthMethod } : {}),
            organizationId: this.orgId,
            ...(application !== undefined ? { applicationId: this.applicationId(application) } : {}),
          });
          if (created.data.secret) this.options.onSecret?.({ organization: this.target.slug, kind: "client", key: rest.name, id: created.data.id, secret: created.data.secret.value });
          await this.setStatus("clients", created.data.id, status, created.data.status, created.etag);
          return;
        }
        const body = changed(change.fields, ["status", "application"]);
        if (change.fields.some((f) => f.field === "application")) body.applicationId = this.applicationId(application);
        const current = this.target.state?.clients.find((l) => l.data.id === change.id)?.data.status;
        let etag = change.etag;
        if (Object.keys(body).length > 0) etag = (await c.clients.update(change.id!, body, ifMatch)).etag;
        await this.setStatus("clients", change.id!, status, current, etag);
        return;
      }
      case "identityProvider": {
        if (change.action === "delete") {
          await c.identityProviders.delete(change.id!, ifMatch);
          return;
        }
        const p = change.desired!;
        if (change.action === "create") {
          const body = providerBody(p, this.options.secrets);
          await c.identityProviders.create({ ...(body as { name: string }), organizationId: this.orgId });
          return;
        }
        const wanted = changed(change.fields) as Partial<IdentityProviderConfig>;
        const { tenantId, ...rest } = wanted;
        const body = providerBody({ ...rest, ...(wanted.clientSecret !== undefined ? { clientSecret: p.clientSecret } : {}) }, this.options.secrets);
        // A microsoft provider's tenant lives in its issuer.
        if (tenantId) body.issuer = MICROSOFT_ISSUER(tenantId);
        await c.identityProviders.update(change.id!, body, ifMatch);
        return;
      }
      case "webhook": {
        if (change.action === "delete") {
          await c.webhooks.delete(this.orgId, change.id!, ifMatch);
          return;
        }
        const w = change.desired!;
        if (change.action === "create") {
          const created = await c.webhooks.create(this.orgId, { url: w.url, eventTypes: w.eventTypes ?? [], ...definedOnly({ description: w.description, enabled: w.enabled }) });
          this.options.onSecret?.({ organization: this.target.slug, kind: "webhook", key: w.url, id: created.data.id, secret: created.data.secret });
          return;
        }
        await c.webhooks.update(this.orgId, change.id!, changed(change.fields), ifMatch);
        return;
      }
    }
  }
}

/** The changes apply makes, in the order it makes them. */
export function orderedChanges(target: OrganizationPlan, prune: boolean): Change[] {
  const rank = (order: readonly Change["kind"][]) => (c: Change) => order.indexOf(c.kind);
  const writes = [...target.plan.changes].sort((a, b) => rank(CREATE_ORDER)(a) - rank(CREATE_ORDER)(b));
  const deletes = prune ? [...target.plan.prunable].sort((a, b) => rank(DELETE_ORDER)(a) - rank(DELETE_ORDER)(b)) : [];
  return [...writes, ...deletes];
}

/** Applies every organization's plan in turn; returns how many changes were made. */
export async function applyPlans(client: PortaAdmin, targets: OrganizationPlan[], options: ApplyOptions): Promise<number> {
  let made = 0;
  for (const target of targets) {
    const applier = new OrganizationApplier(client, target, options);
    for (const change of orderedChanges(target, options.prune)) {
      try {
        await applier.apply(change);
      } catch (error) {
        if (isStale(error))
          throw new ApplyStoppedError(
            `${label(change)} changed since it was read for this plan (the server refused the write: ${(error as PortaError).status} ${(error as PortaError).code}). Apply stopped; ${made} change(s) were made before it. Run \`porta plan\` again to see the current differences.`,
            change,
            error as PortaError,
          );
        if (isPortaError(error))
          throw new ApplyStoppedError(`Could not ${change.action} ${label(change)}: ${error.status} ${error.code}: ${error.message}. Apply stopped; ${made} change(s) were made before it.`, change, error);
        throw error;
      }
      made++;
      options.onApplied?.(change);
    }
  }
  return made;
}
