/**
 * Every audit event Porta records, defined once: the audit writer accepts only these names, the
 * console offers them as filters, and docs/audit-events.md is checked against this table by a
 * test. The first nine are the specification's (its "Events" table); the rest record admin
 * writes and are named `<target>.<what happened>`.
 */
export const AUDIT_EVENTS = {
  "auth.login.success": "A person signed in (data: method, client; a federated sign-in also providerId and provider).",
  "auth.login.failure":
    "A sign-in was refused (data: method, email attempted, reason; target: the account that email names, if any). Federated: also providerId and, when the upstream answered with an OAuth error, its code as `upstreamError`; an unknown state at the callback (`invalid_state`) and an upstream unreachable at the start (`upstream_unreachable`) are recorded too (decision 082).",
  "auth.magic_link.sent": "A magic link was requested and mailed.",
  "auth.magic_link.verified": "A magic link was used.",
  "auth.password.verified": "A password was right; a second factor follows.",
  "auth.2fa.verified": "A second factor was accepted (data: method otp, totp, recovery or passkey).",
  "auth.2fa.failed": "A second factor was refused (data: method, reason).",
  "auth.2fa.enrolled": "A person set up a second factor.",
  "auth.2fa.factor_locked": "A second factor (data: method totp or otp) reached the limit of wrong codes in a row and is refused until the person signs in with a recovery code or a passkey, or an administrator clears the block (data: failures).",
  "auth.password_reset.requested": "A password reset was asked for.",
  "auth.password_reset.completed": "A password was reset through its link.",
  "security.login_method_disabled": "A login method the client or organization does not allow was tried.",

  "account.profile_updated": "A person changed their own name or language on the account page.",
  "account.email_change_requested": "A person asked to change their email address; a link went to the new one (data: newEmail).",
  "account.email_changed": "A person confirmed a new email address through its link (data: previousEmail, newEmail).",
  "account.password_changed": "A person changed their password on the account page (data: otherSessionsEnded).",
  "account.password_set": "A person without a password set one on the account page.",
  "account.2fa.removed": "A person removed a second factor on the account page (data: method).",
  "account.2fa.email_enabled": "A person turned email codes on as their second factor.",
  "account.2fa.email_disabled": "A person turned email codes off.",
  "account.2fa.recovery_codes_regenerated": "A person replaced their recovery codes on the account page.",
  "account.passkey.added": "A person registered a passkey on the account page (data: passkeyId, name, deviceType).",
  "account.passkey.renamed": "A person renamed one of their passkeys (data: passkeyId, name).",
  "account.passkey.removed": "A person removed one of their passkeys (data: passkeyId, name).",
  "account.session_ended": "A person ended one of their sessions on the account page.",
  "account.sessions_ended": "A person ended all their other sessions on the account page (data: count).",

  "organization.created": "An organization was created.",
  "organization.updated": "An organization's fields changed.",
  "organization.suspended": "An organization was suspended.",
  "organization.activated": "An organization was activated.",
  "organization.deleted": "An organization was deleted.",
  "organization.2fa_policy.updated": "An organization's two-factor policy changed.",
  "organization.branding.updated": "An organization's branding changed.",
  "organization.branding.asset_uploaded": "A logo or favicon was uploaded.",
  "organization.exported": "An organization was exported.",
  "organization.imported": "An organization package was imported.",

  "application.created": "An application was created.",
  "application.updated": "An application changed.",
  "application.activated": "An application was activated.",
  "application.deactivated": "An application was deactivated.",
  "application.deleted": "An application was deleted.",
  "application.module_added": "A module was added to an application.",
  "application.module_updated": "An application module changed.",
  "application.module_deactivated": "An application module was deactivated.",
  "application.module_deleted": "An application module was deleted.",

  "client.created": "A client was created.",
  "client.updated": "A client changed.",
  "client.activated": "A client was activated.",
  "client.deactivated": "A client was deactivated.",
  "client.deleted": "A client was deleted.",
  "client.secret_generated": "A client secret was generated.",
  "client.secret_revoked": "A client secret was revoked.",
  "client.login_methods_updated": "A client's login methods were set.",
  "client.login_methods_cleared": "A client's login methods now follow its organization.",
  "client.registered": "A client registered itself at the organization's registration endpoint (RFC 7591).",
  "client.registration_updated": "A self-registered client changed its own metadata (RFC 7592).",
  "client.registration_deleted": "A self-registered client deleted itself (RFC 7592).",
  "client.registration_refused": "A registration request was refused (policy, metadata or initial access token).",
  "client.resource_granted": "A client may now ask access tokens for an API resource of its organization, with these of its scopes (data: resourceId, identifier, scopes); a new grant or changed scopes, also when an update of the resource dropped scopes the grant named (then with reason resource_scopes_narrowed).",
  "client.resource_revoked": "A client may no longer ask access tokens for an API resource (data: resourceId, identifier).",
  "organization.registration_policy_updated": "An organization's dynamic client registration policy changed.",
  "registration_token.created": "An initial access token for client registration was issued (its value is never recorded).",
  "registration_token.revoked": "An initial access token for client registration was revoked.",

  "custom_claim.created": "A custom claim was defined.",
  "custom_claim.updated": "A custom claim definition changed.",
  "custom_claim.deleted": "A custom claim was deleted.",
  "custom_claim.value_set": "A user's value for a custom claim was set.",
  "custom_claim.value_deleted": "A user's value for a custom claim was removed.",

  "user.created": "A user was created.",
  "user.updated": "A user's profile changed.",
  "user.activated": "A user was activated.",
  "user.deactivated": "A user was deactivated.",
  "user.unlocked": "An administrator lifted a user's sign-in lockout.",
  "user.block_cleared": "An administrator cleared one block that refused a user (data.change.block: kind, limit, address, factor, until as it was).",
  "user.deleted": "A user was deleted.",
  "user.email_verified": "A user's email was marked verified.",
  "user.password_set": "An administrator set a user's password.",
  "user.password_cleared": "An administrator removed a user's password.",
  "user.exported": "A user's data was exported.",
  "user.invited": "A user was invited.",
  "user.invitation_previewed": "An invitation mail was previewed.",
  "user.invitation_accepted": "An invitation was accepted.",
  "user.invitation_resent": "A pending invitation's mail was sent again (its expiry renewed).",
  "user.invitation_revoked": "A pending invitation was revoked; its link no longer works.",
  "user.role_assigned": "A role was assigned to a user.",
  "user.role_removed": "A role was removed from a user.",
  "user.sessions_revoked": "All of a user's sessions were ended.",
  "user.impersonated": "An administrator obtained a time-limited access token to act as the user (data: clientId, reason, minutes, expiresAt, adminEmail); the user sees it on their account page.",
  "user.2fa.disabled": "A user's second factor was turned off.",
  "user.passkey.deleted": "An administrator deleted one of a user's passkeys (data: passkeyId, name).",
  "user.federated_identity.linked": "A user's account at an upstream identity provider was linked at sign-in (data: providerId, provider, subject).",
  "user.federated_identity.deleted": "An administrator removed a user's link to an upstream identity provider (data: linkId, providerId, provider).",
  "account.federated_identity.removed": "A person removed their link to an upstream identity provider on the account page (data: linkId, providerId, provider).",
  "account.app_access.revoked": "A person took back an application's access on the account page: its grants and the access and refresh tokens issued under them ended (data: clientId).",
  "identity_provider.created": "An upstream identity provider was added to an organization (the client secret is never recorded).",
  "identity_provider.updated": "An upstream identity provider changed (a new client secret is named, never valued).",
  "identity_provider.deleted": "An upstream identity provider was deleted with its users' links to it.",
  "api_resource.created": "An API resource (an API clients ask access tokens for with the resource parameter) was added to an organization.",
  "api_resource.updated": "An API resource changed (identifier, name, scopes, token lifetime, consent, status).",
  "api_resource.deleted": "An API resource was deleted with its client grants (data: identifier, name, grantedClients); tokens already issued for it run out.",
  "user.2fa.reset": "A user's second factor was reset by an administrator.",
  "user.2fa.recovery_codes_regenerated": "A user's recovery codes were replaced.",

  "role.created": "A role was created.",
  "role.updated": "A role changed.",
  "role.permission_assigned": "A permission was added to a role.",
  "role.permission_removed": "A permission was removed from a role.",
  "permission.created": "A permission was created.",
  "permission.deleted": "A permission was deleted.",

  "session.revoked": "A session was ended by an administrator.",
  "token.exchanged": "A client exchanged a person's access token for one to another audience (RFC 8693; data: clientId, subjectClientId, act, audience, scope, expiresIn).",
  "key.generated": "A signing key was generated.",
  "key.rotated": "An organization's signing key was rotated.",
  "key.rotated_all": "Every organization's signing key was rotated.",
  "config.updated": "A system setting changed.",
  "bulk.executed": "A bulk operation ran.",

  "mail.expired": "A mail was not delivered before the link or code it carried expired; it will not be sent (data: kind, attempts).",
  "mail.redriven": "An administrator sent a mail from the dead-letter queue again (data: kind, dead job id).",
  "mail.redriven_all": "An administrator sent every dead mail again (data: redriven, linkExpired, queueFull).",

  "webhook.created": "A webhook endpoint was added (its secret is never recorded).",
  "webhook.updated": "A webhook endpoint changed (URL, event types, description, on or off).",
  "webhook.deleted": "A webhook endpoint was deleted, with its delivery log.",
  "webhook.secret_rotated": "A webhook endpoint's signing secret was replaced.",
  "webhook.disabled": "Porta turned a webhook endpoint off after failed attempts in a row (data: reason, consecutiveFailures).",
  "webhook.delivery_replayed": "An administrator sent a webhook delivery again (data: deliveryId, eventType).",
} as const satisfies Record<string, string>;

export type AuditEventType = keyof typeof AUDIT_EVENTS;

export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENTS) as AuditEventType[];

/** The event families (`auth.*`, `user.*`, ...), as the audit filter takes them. */
export const AUDIT_EVENT_FAMILIES = [...new Set(AUDIT_EVENT_TYPES.map((type) => `${type.slice(0, type.indexOf("."))}.*`))];

export function isAuditEventType(value: string): value is AuditEventType {
  return Object.hasOwn(AUDIT_EVENTS, value);
}
