/** Invitations last a week; the lifetimes of magic and reset links are settings (settings/registry.ts). */
export const INVITATION_TTL_DAYS = 7;

export function magicLinkUrl(baseUrl: string, input: { interactionUid: string; organizationSlug: string; token: string }): string {
  const url = new URL(`${baseUrl}/interaction/${encodeURIComponent(input.interactionUid)}/magic-link/verify`);
  url.searchParams.set("org", input.organizationSlug);
  url.searchParams.set("token", input.token);
  return url.href;
}

export function passwordResetUrl(baseUrl: string, input: { interactionUid: string; token: string }): string {
  const url = new URL(`${baseUrl}/interaction/${encodeURIComponent(input.interactionUid)}/reset-password`);
  url.searchParams.set("token", input.token);
  return url.href;
}

export function invitationUrl(baseUrl: string, input: { organizationSlug: string; token: string }): string {
  const url = new URL(`${baseUrl}/${input.organizationSlug}/invitation`);
  url.searchParams.set("token", input.token);
  return url.href;
}
