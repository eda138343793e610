/** Invitations last a week; the lifetimes of magic and reset links are settings (settings/registry.ts). */
export const INVITATION_TTL_DAYS = 7;
/** A new address is confirmed within the hour its owner asked for it, like a reset link. */
export const EMAIL_CHANGE_TTL_MINUTES = 60;

export function magicLinkUrl(baseUrl: string, input: { interactionUid: string; organizationSlug: string; token: string }): string {
  const url = new URL(`${baseUrl}/interaction/${encodeURIComponent(input.interactionUid)}/magic-link/verify`);
  url.searchParams.set("org", input.organizationSlug);
  url.searchParams.set("token", input.token);
  return url.href;
}

/** Bound to its organization, not to a browser: it opens anywhere (the token knows where to return). */
export function passwordResetUrl(baseUrl: string, input: { organizationSlug: string; token: string; language: string }): string {
  const url = new URL(`${baseUrl}/${input.organizationSlug}/reset-password`);
  url.searchParams.set("token", input.token);
  // The sign-in's language (ui_locales or the asking browser's), so the page speaks it anywhere.
  url.searchParams.set("lang", input.language);
  return url.href;
}

export function invitationUrl(baseUrl: string, input: { organizationSlug: string; token: string }): string {
  const url = new URL(`${baseUrl}/${input.organizationSlug}/invitation`);
  url.searchParams.set("token", input.token);
  return url.href;
}

/** Opens in any browser: the token alone proves the new address received it. */
export function emailChangeUrl(baseUrl: string, input: { organizationSlug: string; token: string; language: string }): string {
  const url = new URL(`${baseUrl}/${input.organizationSlug}/account/email`);
  url.searchParams.set("token", input.token);
  url.searchParams.set("lang", input.language);
  return url.href;
}
