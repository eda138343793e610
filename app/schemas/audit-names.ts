/**
 * Names for the ids an audit entry carries (decision 039), as the Admin API answers them and the
 * console shows them: one shape for both sides.
 */
export interface Named {
  /** The email of a user, the name of anything else; null when gone and never recorded. */
  name: string | null;
  /** Where its console page lives (users, clients, applications and roles belong to one). */
  organizationId: string | null;
  /** It no longer exists (or, for an organization, was deleted). */
  deleted: boolean;
}

export interface AuditNames {
  organization: Named | null;
  /** A person (user) or a client; an actor that is gone is taken for what its type says. */
  actor: (Named & { type: "user" | "client" }) | null;
  target: Named | null;
  /** The client a sign-in or a token went through, when the entry names one (`data.clientId`). */
  client: (Named & { id: string }) | null;
}
