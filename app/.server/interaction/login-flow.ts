import { ADMIN_CLIENT_ID } from "../admin/permissions";
import { attemptPasswordLogin } from "../auth/password-login";
import { savePending } from "../auth/two-factor/pending";
import { issueEmailOtp, planSecondFactor } from "../auth/two-factor/service";
import { getUserById } from "../directory/users";
import { recordLogin } from "../oidc/interaction-results";
import type { Services } from "../services";
import type { InteractionContext } from "./context";

const KNOWN_SCOPES = new Set(["openid", "profile", "email", "offline_access", "roles"]);

export const isFirstPartyClient = (clientId: string) => clientId === ADMIN_CLIENT_ID;

export type PasswordStep = { kind: "redirect"; to: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** Password, then the second-factor step, then the provider's next prompt. */
export async function completePasswordLogin(
  services: Services,
  ic: InteractionContext,
  input: { email: string; password: string; ip: string | null; requestId: string | null; language: string },
): Promise<PasswordStep> {
  const lockout = {
    maxFailures: await services.settings.get("auth.lockout.maxFailures"),
    cooldownSeconds: (await services.settings.get("auth.lockout.cooldownMinutes")) * 60,
  };
  // Planned as soon as the password is right, so the attempt knows whether it completes the sign-in.
  const planned: { plan: Awaited<ReturnType<typeof planSecondFactor>> } = { plan: null };
  const result = await attemptPasswordLogin(
    { prisma: services.db.prisma, hasher: services.passwords, limits: services.limits, audit: services.audit, lockout },
    {
      organizationId: ic.organization.id,
      clientId: ic.client.id,
      email: input.email,
      password: input.password,
      ip: input.ip,
      requestId: input.requestId,
      secondFactorFollows: async (userId) => (planned.plan = await planSecondFactor(services, userId, ic.organization.twoFactorPolicy)) !== null,
    },
  );
  if (result.outcome === "rate_limited") return { kind: "rate_limited", retryAfterSeconds: result.retryAfterSeconds };
  if (result.outcome === "failure") return { kind: "failed" };
  const { plan } = planned;
  if (!plan) return { kind: "redirect", to: await recordLogin(ic.interaction, { accountId: result.userId, amr: ["pwd"] }) };
  const chosen = plan.methods.length === 1 ? plan.methods[0]! : null;
  await savePending(services.store, ic.uid, {
    userId: result.userId,
    organizationId: ic.organization.id,
    plan,
    chosen,
    enrolled: false,
    language: input.language,
  });
  if (plan.enrollTotp) return { kind: "redirect", to: `/interaction/${ic.uid}/two-factor/setup` };
  if (chosen === "email") await issueEmailOtp(services, result.userId, input.language);
  return { kind: "redirect", to: `/interaction/${ic.uid}/two-factor` };
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
