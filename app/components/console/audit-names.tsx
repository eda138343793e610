import { Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";

export type { AuditNames, Named } from "~/schemas/audit-names";
import type { AuditNames, Named } from "~/schemas/audit-names";

/** The console page of a thing, where the console has one. */
export function entityPath(type: string | null | undefined, id: string, organizationId: string | null): string | null {
  const org = organizationId ? `/console/organizations/${encodeURIComponent(organizationId)}` : null;
  const ref = encodeURIComponent(id);
  switch (type) {
    case "organization":
      return `/console/organizations/${ref}`;
    case "user":
      return org && `${org}/users/${ref}`;
    case "client":
      return org && `${org}/clients/${ref}`;
    case "application":
      return org && `${org}/applications/${ref}`;
    case "role":
      return org && `${org}/roles/${ref}`;
    case "identity_provider":
      return org && `${org}/identity-providers/${ref}`;
    default:
      return null;
  }
}

/**
 * A thing by name, linked to its page while it exists; its id on hover. A thing that is gone
 * keeps the name its entry recorded, marked deleted, or is "deleted <type>" with its id.
 */
export function NamedRef({ type, id, named }: { type: string | null; id: string | null; named: Named | null }) {
  const { t } = useTranslation("console");
  if (!id) return <>{type ? t(`audit.types.${type}`, { defaultValue: type }) : "—"}</>;
  const kind = type ? t(`audit.types.${type}`, { defaultValue: type }) : "";
  if (!named || named.deleted) {
    const label = named?.name ? `${named.name} (${t("audit.deleted")})` : t("audit.deletedThing", { type: kind });
    return (
      <span className="named named-deleted" title={id}>
        {label}
        {named?.name ? null : <> <code>{id}</code></>}
      </span>
    );
  }
  const label = named.name ?? id;
  const path = entityPath(type, id, named.organizationId);
  return path ? (
    <Link to={path} title={`${kind} ${id}`} className="named">
      {label}
    </Link>
  ) : (
    <span className="named" title={`${kind} ${id}`}>
      {label}
    </span>
  );
}

/** Who acted: a person or client by name; the system and anonymous callers by what they are. */
export function ActorRef({ actorType, actorId, named }: { actorType: string; actorId: string | null; named: AuditNames["actor"] }) {
  const { t } = useTranslation("console");
  const kind = t(`audit.actors.${actorType}`, { defaultValue: actorType });
  if (!actorId || !named) return <>{kind}</>;
  return (
    <>
      <span className="actor-kind">{kind}</span> <NamedRef type={named.type} id={actorId} named={named} />
    </>
  );
}
