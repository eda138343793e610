import type { TFunction } from "i18next";
import { describeUserAgent } from "../account/account-page";
import { NamedRef } from "./audit-names";
import { Moment, type Column } from "./list-table";

/** A session as the Admin API lists it (decision 039): names, and where its browser was last seen. */
export interface SessionRow {
  id: string;
  organizationId: string;
  userId: string | null;
  clientId: string | null;
  userEmail: string | null;
  clientName: string | null;
  ip: string | null;
  userAgent: string | null;
  createdAt: string;
  lastSeenAt: string | null;
  expiresAt: string | null;
}

const named = (name: string | null, organizationId: string) => ({ name, organizationId, deleted: name === null });

/**
 * The columns of every session listing: who (the user's email, linked; left out on a user's own
 * page), the client by name, IP address, browser (as the account page names it; the whole
 * header on hover), started, last activity and expiry.
 */
export function sessionColumns(t: TFunction<"console">, options: { user: boolean }): Array<Column<SessionRow>> {
  return [
    ...(options.user ? [{ header: t("sessions.user"), cell: (s: SessionRow) => <NamedRef type="user" id={s.userId} named={named(s.userEmail, s.organizationId)} /> }] : []),
    { header: t("sessions.client"), cell: (s) => <NamedRef type="client" id={s.clientId} named={named(s.clientName, s.organizationId)} /> },
    { header: t("sessions.ip"), cell: (s) => s.ip ?? "—" },
    { header: t("sessions.userAgent"), cell: (s) => (s.userAgent ? <span className="user-agent" title={s.userAgent}>{describeUserAgent(s.userAgent)}</span> : "—") },
    { header: t("sessions.started"), cell: (s) => <Moment iso={s.createdAt} /> },
    { header: t("sessions.lastSeen"), cell: (s) => <Moment iso={s.lastSeenAt} /> },
    { header: t("sessions.expires"), cell: (s) => <Moment iso={s.expiresAt} /> },
  ];
}
