import { isUuid } from "~/schemas/uuid";
import type { AuditNames, Named } from "~/schemas/audit-names";
import type { Db } from "../../context";

export type { AuditNames, Named };

/**
 * Names for the ids an audit entry carries (decision 039): the organization, who acted, what
 * was acted on, and the client a sign-in went through. A page of entries is resolved with one
 * query per kind of thing, never one per entry. A thing that no longer exists keeps the last
 * name the entry itself recorded (a deleted user's email, a deleted client's name), or none.
 */
export interface AuditRef {
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  targetType?: string | null;
  targetId?: string | null;
  data: unknown;
}

interface Found {
  name: string;
  organizationId: string | null;
  deleted: boolean;
}

type Kind = "organization" | "user" | "client" | "application" | "role" | "permission" | "identity_provider" | "api_resource";

const record = (value: unknown): Record<string, unknown> => (value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);

/** The name an entry recorded for its target, for when the target is gone. */
function recordedName(targetType: string | null | undefined, data: unknown): string | null {
  const d = record(data);
  const change = record(d.change);
  if (targetType === "user") return text(change.email) ?? text(d.email);
  if (targetType === "custom_claim") return text(d.claimName);
  // A webhook endpoint is known by its URL (decision 047).
  if (targetType === "webhook") return text(change.url) ?? text(d.url);
  // An initial access token is known by its label, else the last characters an operator sees (decision 054).
  // An organization's domain is known by its name, which every domain entry records (decision 086).
  if (targetType === "organization_domain") return text(d.domain);
  if (targetType === "registration_token") return text(change.label) ?? text(d.label) ?? (text(d.hint) ? `…${String(d.hint)}` : null);
  return text(change.name) ?? text(d.name);
}

/** Which table an actor id names: people are users; an admin may also be a client (client credentials). */
const actorKinds = (actorType: string, actorId: string): Kind[] =>
  actorType === "user" ? ["user"] : actorType === "client" ? ["client"] : actorType === "admin" ? (isUuid(actorId) ? ["user", "client"] : ["client"]) : [];

const TARGET_KINDS = new Set<string>(["organization", "user", "client", "application", "role", "permission", "identity_provider", "api_resource"]);

export async function resolveNames(db: Db, entries: readonly AuditRef[]): Promise<AuditNames[]> {
  const wanted: Record<Kind, Set<string>> = {
    organization: new Set(),
    user: new Set(),
    client: new Set(),
    application: new Set(),
    role: new Set(),
    permission: new Set(),
    identity_provider: new Set(),
    api_resource: new Set(),
  };
  for (const e of entries) {
    if (e.organizationId) wanted.organization.add(e.organizationId);
    if (e.actorId) for (const kind of actorKinds(e.actorType, e.actorId)) wanted[kind].add(e.actorId);
    if (e.targetId && e.targetType && TARGET_KINDS.has(e.targetType)) wanted[e.targetType as Kind].add(e.targetId);
    const clientId = text(record(e.data).clientId);
    if (clientId) wanted.client.add(clientId);
  }
  const uuids = (kind: Kind) => [...wanted[kind]].filter(isUuid);
  const none = Promise.resolve([]);
  const [orgs, users, clients, apps, roles, permissions, providers, resources] = await Promise.all([
    uuids("organization").length ? db.organization.findMany({ where: { id: { in: uuids("organization") } }, select: { id: true, name: true, status: true } }) : none,
    uuids("user").length ? db.user.findMany({ where: { id: { in: uuids("user") } }, select: { id: true, email: true, organizationId: true } }) : none,
    wanted.client.size ? db.client.findMany({ where: { id: { in: [...wanted.client] } }, select: { id: true, name: true, organizationId: true } }) : none,
    uuids("application").length ? db.application.findMany({ where: { id: { in: uuids("application") } }, select: { id: true, name: true, organizationId: true } }) : none,
    uuids("role").length ? db.role.findMany({ where: { id: { in: uuids("role") } }, select: { id: true, name: true, organizationId: true } }) : none,
    uuids("permission").length ? db.permission.findMany({ where: { id: { in: uuids("permission") } }, select: { id: true, name: true, organizationId: true } }) : none,
    uuids("identity_provider").length
      ? db.identityProvider.findMany({ where: { id: { in: uuids("identity_provider") } }, select: { id: true, name: true, organizationId: true } })
      : none,
    uuids("api_resource").length ? db.apiResource.findMany({ where: { id: { in: uuids("api_resource") } }, select: { id: true, name: true, organizationId: true } }) : none,
  ]);
  const found: Record<Kind, Map<string, Found>> = {
    organization: new Map(orgs.map((o) => [o.id, { name: o.name, organizationId: o.id, deleted: o.status === "deleted" }])),
    user: new Map(users.map((u) => [u.id, { name: u.email, organizationId: u.organizationId, deleted: false }])),
    client: new Map(clients.map((c) => [c.id, { name: c.name, organizationId: c.organizationId, deleted: false }])),
    application: new Map(apps.map((a) => [a.id, { name: a.name, organizationId: a.organizationId, deleted: false }])),
    role: new Map(roles.map((r) => [r.id, { name: r.name, organizationId: r.organizationId, deleted: false }])),
    permission: new Map(permissions.map((p) => [p.id, { name: p.name, organizationId: p.organizationId, deleted: false }])),
    identity_provider: new Map(providers.map((p) => [p.id, { name: p.name, organizationId: p.organizationId, deleted: false }])),
    api_resource: new Map(resources.map((r) => [r.id, { name: r.name, organizationId: r.organizationId, deleted: false }])),
  };

  return entries.map((e) => {
    const kinds = e.actorId ? actorKinds(e.actorType, e.actorId) : [];
    const actorKind = kinds.find((kind) => found[kind].has(e.actorId!)) ?? kinds[0];
    const actor = actorKind ? found[actorKind].get(e.actorId!) : undefined;
    const clientId = text(record(e.data).clientId);
    const client = clientId ? found.client.get(clientId) : undefined;
    return {
      organization: e.organizationId ? (found.organization.get(e.organizationId) ?? { name: null, organizationId: e.organizationId, deleted: true }) : null,
      actor: actorKind ? { type: actorKind === "client" ? "client" : "user", ...(actor ?? { name: null, organizationId: null, deleted: true }) } : null,
      target: targetName(e, found),
      client: clientId ? { id: clientId, ...(client ?? { name: null, organizationId: e.organizationId, deleted: true }) } : null,
    };
  });
}

function targetName(e: AuditRef, found: Record<Kind, Map<string, Found>>): Named | null {
  if (!e.targetId || !e.targetType) return null;
  // A setting is named by its key; there is nothing else to look up.
  if (e.targetType === "config") return { name: e.targetId, organizationId: null, deleted: false };
  const hit = TARGET_KINDS.has(e.targetType) ? found[e.targetType as Kind].get(e.targetId) : undefined;
  if (hit) return hit;
  return { name: recordedName(e.targetType, e.data), organizationId: e.organizationId, deleted: TARGET_KINDS.has(e.targetType) };
}
