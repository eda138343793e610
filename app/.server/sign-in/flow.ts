import { ADMIN_CLIENT_ID } from "../admin/permissions";
import type { RequestMeta } from "../auth/actors";
import { finishSignIn } from "./finish";
import { issueDeviceCookie } from "./device-cookie";
import { attemptPasswordLogin } from "./methods/password";
import { planForSignIn, startSecondFactor, type SecondFactorPlan } from "../auth/two-factor/service";
import { getUserById } from "../directory/users";
import { stepUpRequested } from "../oidc/acr";
import type { Services } from "../services";
import type { InteractionContext } from "./interaction";

const KNOWN_SCOPES = new Set(["openid", "profile", "email", "offline_access", "roles"]);

export const isFirstPartyClient = (clientId: string) => clientId === ADMIN_CLIENT_ID;

/** `deviceCookie`: the Set-Cookie header of the browser's new device cookie for the account. */
export type PasswordStep = { kind: "redirect"; to: string; deviceCookie: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** Password, then either the end of the sign-in or the second-factor step; the browser goes where it says. */
export async function completePasswordLogin(
  services: Services,
  ic: InteractionContext,
  input: { email: string; password: string; meta: RequestMeta; language: string; deviceCookie?: string },
): Promise<PasswordStep> {
  const lockout = {
    maxFailures: await services.settings.get("auth.lockout.maxFailures"),
    cooldownSeconds: (await services.settings.get("auth.lockout.cooldownMinutes")) * 60,
  };
  const stepUp = stepUpRequested(ic.interaction.params);
  // Planned as soon as the password is right, so the attempt knows whether it completes the sign-in.
  const planned: { plan: SecondFactorPlan | null } = { plan: null };
  const { result, redirectTo } = await finishSignIn(services, { at: ic, method: "password", meta: input.meta }, (complete) =>
    attemptPasswordLogin(
      services,
      {
        organizationId: ic.organization.id,
        clientId: ic.client.id,
        email: input.email,
        password: input.password,
        ...input.meta,
        lockout,
        ...(input.deviceCookie ? { deviceCookie: input.deviceCookie } : {}),
        secondFactorFollows: (_userId, enrollment) => (planned.plan = planForSignIn(enrollment, ic.organization.twoFactorPolicy, stepUp)) !== null,
      },
      complete,
    ),
  );
  if (result.outcome === "rate_limited") return { kind: "rate_limited", retryAfterSeconds: result.retryAfterSeconds };
  if (result.outcome === "failure") return { kind: "failed" };
  // A right password makes this browser a known device of the account (OWASP device cookies).
  const deviceCookie = issueDeviceCookie(services, ic.organization.id, result.userId);
  if (redirectTo) return { kind: "redirect", to: redirectTo, deviceCookie };
  return { kind: "redirect", to: await startSecondFactor(services, ic, { userId: result.userId, plan: planned.plan!, language: input.language }), deviceCookie };
}

/** What the consent page lists: every scope the client asks for, known ones by name. */
export async function consentView(services: Services, ic: InteractionContext) {
  const details = ic.interaction.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const requested = new Set<string>(details.missingOIDCScope ?? []);
  for (const scopes of Object.values(details.missingResourceScopes ?? {})) for (const s of scopes) requested.add(s);
  const accountId = ic.interaction.session?.accountId;
  const user = accountId ? await getUserById(services.db.prisma, services.cache, accountId) : null;
  return {
    email: user?.email ?? "",
    scopes: [...requested].map((name) => ({ name, known: KNOWN_SCOPES.has(name) })),
  };
}
