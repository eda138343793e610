/** Invitations last a week; the lifetimes of magic and reset links are settings (settings/registry.ts). */
export const INVITATION_TTL_DAYS = 7;

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
