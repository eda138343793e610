import { parseMetadataDocumentClientId } from "~/schemas/client-metadata-document";
import type { LoginMethod } from "~/schemas/login-methods";
import { ADMIN_CLIENT_ID } from "../admin/permissions";
import { userActor, type RequestMeta } from "../auth/actors";
import { isFactorLocked } from "../auth/two-factor/factor-failures";
import type { CollaboratorName } from "../context";
import { getUserById } from "../directory/users";
import { stepUpRequested } from "../oidc/features/acr";
import type { SecondFactorUsed } from "./amr";
import { verifyCode, type CodeFactor, type VerifyInput, type VerifyMethod, type VerifyResult } from "./code-factor";
import { issueDeviceCookie } from "./device-cookie";
import { proving, type SignIn } from "./finish";
import type { InteractionContext } from "./interaction";
import type { FirstFactor, SecondFactor, SignInContext } from "./method";
import { emailCode, issueEmailOtp } from "./methods/email-code";
import { completeFederatedSignIn, federated, startFederatedSignIn as startUpstreamSignIn, startForEmail as startUpstreamForEmail } from "./methods/federated";
import { acceptSamlResponse, completeSamlSignIn, startSamlSignIn } from "./saml-sign-in";
import { providerForEmail } from "../federation/providers";
import { finishConfirmedElsewhere, magicLink, signInWithMagicLink } from "./methods/magic-link";
import { passkey, signInWithPasskey } from "./methods/passkey";
import { enrollPasskeyAtSignIn, passkeySecondFactor, verifyPasskeySecondFactor } from "./methods/passkey-second-factor";
import { attemptPasswordLogin, password } from "./methods/password";
import { recoveryCode } from "./methods/recovery-code";
import { totp } from "./methods/totp";
import { clearPending, loadPending, primaryOf, savePending, type PendingSecondFactor } from "./pending";
import { planForSignIn, type SecondFactorPlan } from "./plan";

/**
 * The sign-in's one sequence (docs/architecture.md, "Sign-in"):
 *
 *   first factor ──proof──▶ plan the second factor ──none──▶ finish (lastLoginAt, audit, provider)
 *                                   │ a plan
 *                                   ▼
 *                 pending step (pending.ts) ──second factor's proof──▶ finish
 *
 * A method (methods/*.ts) checks what it was given and returns its proof from the transaction of
 * its own writes; this module hands it the runner (`prove`, finish.ts) that records the sign-in in
 * that transaction. Step-up (a relying party asking for two factors) only changes the plan.
 */
export const FIRST_FACTORS = { password, magic_link: magicLink, passkey, federated } as const satisfies Record<LoginMethod, FirstFactor>;
export const SECOND_FACTORS = { totp, email: emailCode, recovery: recoveryCode, passkey: passkeySecondFactor } as const satisfies Record<SecondFactorUsed, SecondFactor>;

// What the sign-in pages ask of a method that proves nothing (options, buttons, where an answer goes), passed on.
export { confirmMagicLinkElsewhere, confirmedElsewhere, pairingCodeFor } from "./methods/magic-link";
export { continueFromCallback, loginPageProviders } from "./methods/federated";
export { samlMetadata, idpInitiatedContinuation } from "./saml-sign-in";
export { passkeyLoginOptions } from "./methods/passkey";
export { isFactorLocked } from "../auth/two-factor/factor-failures";
export { passkeyEnrollmentDue, passkeyEnrollmentOptions, passkeySecondFactorOptions } from "./methods/passkey-second-factor";

/** The door's context, with every collaborator: the flow hands each method the part it names. */
type FlowContext = SignInContext<CollaboratorName>;

const KNOWN_SCOPES = new Set(["openid", "profile", "email", "offline_access", "roles"]);

export const isFirstPartyClient = (clientId: string) => clientId === ADMIN_CLIENT_ID;

/** A method's context for one sign-in of the interaction: the door's, and the runner that records its proof. */
const signingIn = (ctx: FlowContext, signIn: SignIn) => ({ ...ctx, prove: proving(ctx, signIn) });

/** A second factor's, after the first one the pending step remembers. */
const completing = (ctx: FlowContext, ic: InteractionContext, pending: PendingSecondFactor, secondFactor: SecondFactorUsed) => {
  const primary = primaryOf(pending);
  return signingIn(ctx, { at: ic, method: primary.method, secondFactor, ...(primary.provider ? { provider: primary.provider } : {}) });
};

// ---------------------------------------------------------------------------------------------
// First factors

/** `deviceCookie`: the Set-Cookie header of the browser's new device cookie for the account. */
export type PasswordStep = { kind: "redirect"; to: string; deviceCookie: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** Password, then either the end of the sign-in or the second-factor step; the browser goes where it says. */
export async function completePasswordLogin(
  ctx: FlowContext,
  ic: InteractionContext,
  input: { email: string; password: string; meta: RequestMeta; language: string; deviceCookie?: string },
): Promise<PasswordStep> {
  const lockout = {
    maxFailures: await ctx.settings.get("auth.lockout.maxFailures"),
    cooldownSeconds: (await ctx.settings.get("auth.lockout.cooldownMinutes")) * 60,
  };
  const stepUp = stepUpRequested(ic.interaction.params);
  // Planned as soon as the password is right (from the enrollment read with the account), so the
  // attempt knows whether its transaction proves the sign-in or only records a right password.
  const planned: { plan: SecondFactorPlan | null } = { plan: null };
  const result = await attemptPasswordLogin(signingIn(ctx, { at: ic, method: "password" }), {
    organizationId: ic.organization.id,
    clientId: ic.client.id,
    email: input.email,
    password: input.password,
    ...input.meta,
    lockout,
    ...(input.deviceCookie ? { deviceCookie: input.deviceCookie } : {}),
    secondFactorFollows: (_userId, enrollment) => (planned.plan = planForSignIn(enrollment, ic.organization.twoFactorPolicy, stepUp)) !== null,
  });
  if (result.outcome === "rate_limited") return { kind: "rate_limited", retryAfterSeconds: result.retryAfterSeconds };
  if (result.outcome === "failure") return { kind: "failed" };
  // A right password makes this browser a known device of the account (OWASP device cookies).
  const deviceCookie = issueDeviceCookie(ctx, ic.organization.id, result.userId);
  if (result.redirectTo) return { kind: "redirect", to: result.redirectTo, deviceCookie };
  return { kind: "redirect", to: await startSecondFactor(ctx, ic, { userId: result.userId, plan: planned.plan!, language: input.language }), deviceCookie };
}

/** A magic link at its callback; `at` is null when this browser has no interaction to sign in to. */
export function magicLinkSignIn(ctx: FlowContext, input: Parameters<typeof signInWithMagicLink>[1]) {
  return signInWithMagicLink({ ...ctx, prove: input.at ? proving(ctx, { at: input.at, method: "magic_link" }) : null }, input);
}

/** The asking browser finishes a magic-link sign-in another browser confirmed. */
export function magicLinkConfirmedElsewhere(ctx: FlowContext, input: { at: InteractionContext; meta: RequestMeta }) {
  return finishConfirmedElsewhere(signingIn(ctx, { at: input.at, method: "magic_link" }), input);
}

export function passkeySignIn(ctx: FlowContext, ic: InteractionContext, input: { credential: unknown; meta: RequestMeta }) {
  return signInWithPasskey(signingIn(ctx, { at: ic, method: "passkey" }), ic, input);
}

/**
 * The login page's button or home-realm discovery: a SAML connection gets an AuthnRequest
 * (saml-sign-in.ts), any other provider the OpenID or OAuth request (methods/federated.ts).
 */
export async function startFederatedSignIn(ctx: FlowContext, ic: InteractionContext, input: { providerId: string; loginHint?: string; ip: string | null }) {
  return (await startSamlSignIn(ctx, ic, input)) ?? startUpstreamSignIn(ctx, ic, input);
}

export async function startForEmail(ctx: FlowContext, ic: InteractionContext, email: string, ip: string | null) {
  if (!ic.methods.includes("federated")) return null;
  const provider = await providerForEmail(ctx.db, ic.organization.id, email);
  const saml = provider ? await startSamlSignIn(ctx, ic, { providerId: provider.id, ip }) : null;
  return saml ?? startUpstreamForEmail(ctx, ic, email, ip);
}

/** The IdP's post to a SAML connection's ACS: on to the interaction's return page, or refused. */
export function samlResponseReceived(ctx: FlowContext, input: Parameters<typeof acceptSamlResponse>[1]) {
  return acceptSamlResponse(ctx, input);
}

export type FederatedReturn =
  | { kind: "redirect"; to: string }
  | Exclude<Awaited<ReturnType<typeof completeFederatedSignIn>> | Awaited<ReturnType<typeof completeSamlSignIn>>, { kind: "second_factor" | "redirect" }>;

/** The upstream's answer: signed in, on to the organization's second factor, or refused. `saml` names a SAML connection's verified person (the ACS put it there). */
export async function federatedSignIn(ctx: FlowContext, ic: InteractionContext, input: { search: URLSearchParams; meta: RequestMeta; language: string }): Promise<FederatedReturn> {
  const samlKey = input.search.get("saml");
  const outcome =
    samlKey !== null
      ? await completeSamlSignIn(signingIn(ctx, { at: ic, method: "federated" }), ic, { key: samlKey, meta: input.meta })
      : await completeFederatedSignIn(signingIn(ctx, { at: ic, method: "federated" }), ic, input);
  if (outcome.kind !== "second_factor") return outcome;
  return { kind: "redirect", to: await startSecondFactor(ctx, ic, { userId: outcome.userId, plan: outcome.plan, language: input.language, primary: outcome.primary }) };
}

// ---------------------------------------------------------------------------------------------
// The step between the first factor and the second

/** After a first factor whose plan asks for a second: keeps the step and returns the page that asks for it. */
export async function startSecondFactor(
  ctx: FlowContext,
  ic: InteractionContext,
  input: { userId: string; plan: SecondFactorPlan; language: string; primary?: PendingSecondFactor["primary"] },
): Promise<string> {
  const chosen = input.plan.methods.length === 1 ? input.plan.methods[0]! : null;
  await savePending(ctx.store, ic.uid, {
    userId: input.userId,
    organizationId: ic.organization.id,
    plan: input.plan,
    chosen,
    enrolled: false,
    language: input.language,
    ...(input.primary ? { primary: input.primary } : {}),
  });
  if (input.plan.enrollTotp) return `/interaction/${ic.uid}/two-factor/setup`;
  // A refused factor gets no code: the page offers another way instead.
  if (chosen === "email" && !(await isFactorLocked(ctx, input.userId, "email"))) await issueEmailOtp(ctx, input.userId, input.language);
  return `/interaction/${ic.uid}/two-factor`;
}

/** The step of this interaction, or null (no first factor yet, or another organization's). */
export async function loadSecondFactorStep(ctx: SignInContext<"store">, ic: InteractionContext): Promise<PendingSecondFactor | null> {
  const pending = await loadPending(ctx.store, ic.uid);
  return pending && pending.organizationId === ic.organization.id ? pending : null;
}

export type ResendOutcome = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * The person picks one of the plan's factors (anything else changes nothing); an emailed code
 * goes out at once, within the same per-user limit on mails as "send another code": choosing
 * email again and again must not send a mail each time.
 */
export async function chooseSecondFactor(ctx: FlowContext, ic: InteractionContext, pending: PendingSecondFactor, method: unknown): Promise<ResendOutcome> {
  if ((method !== "totp" && method !== "email" && method !== "passkey") || !pending.plan.methods.includes(method)) return { ok: true };
  await savePending(ctx.store, ic.uid, { ...pending, chosen: method });
  return method === "email" ? resendEmailOtp(ctx, pending) : { ok: true };
}

/** Another emailed code, within the per-user limit on mails (each code is one). */
export async function resendEmailOtp(ctx: FlowContext, pending: PendingSecondFactor): Promise<ResendOutcome> {
  if (await isFactorLocked(ctx, pending.userId, "email")) return { ok: true };
  const limit = await ctx.limits.consume("emailOtpResend", pending.userId);
  if (!limit.allowed) return { ok: false, retryAfterSeconds: limit.retryAfterSeconds };
  await issueEmailOtp(ctx, pending.userId, pending.language);
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------
// Second factors

const CODE_FACTORS: Record<VerifyMethod, CodeFactor<"encrypter" | "otp" | "passwords">> = { totp, email: emailCode, recovery: recoveryCode };

/** Checks a typed code with its limits and audit entries, without completing a sign-in. */
export function verifySecondFactor(ctx: FlowContext, input: VerifyInput): Promise<VerifyResult> {
  return verifyCode(ctx, CODE_FACTORS[input.method], input);
}

export type SecondFactorStepOutcome =
  | { kind: "signed_in"; redirectTo: string }
  /** The method is not the chosen one, nor a recovery code the plan allows: back to the step's page. */
  | { kind: "not_offered" }
  | { kind: "failed" }
  /** The factor had too many wrong codes in a row: another way (recovery code, passkey) or an administrator. */
  | { kind: "factor_locked" }
  | { kind: "rate_limited"; retryAfterSeconds: number };

/** The code a person submitted at the step: verified, it completes the sign-in; the step is then over. */
export async function signInWithSecondFactor(
  ctx: FlowContext,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { method: unknown; code: string; meta: RequestMeta },
): Promise<SecondFactorStepOutcome> {
  const { method } = input;
  const offered: Array<VerifyMethod | "passkey"> = [...(pending.chosen ? [pending.chosen] : []), ...(pending.plan.recovery ? (["recovery"] as const) : [])];
  if ((method !== "totp" && method !== "email" && method !== "recovery") || !offered.includes(method)) return { kind: "not_offered" };
  const result = await verifyCode(completing(ctx, ic, pending, method), CODE_FACTORS[method], {
    userId: pending.userId,
    organizationId: pending.organizationId,
    method,
    code: input.code,
    ...input.meta,
  });
  if (result.ok && result.redirectTo) {
    await clearPending(ctx.store, ic.uid);
    return { kind: "signed_in", redirectTo: result.redirectTo };
  }
  if (result.ok) return { kind: "failed" };
  if (result.reason === "rate_limited") return { kind: "rate_limited", retryAfterSeconds: result.retryAfterSeconds };
  if (result.reason === "factor_locked") return { kind: "factor_locked" };
  return { kind: "failed" };
}

/** A passkey as the second factor, or registered at the step when the plan requires one the person does not have. */
export async function passkeyAtStep(
  ctx: FlowContext,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; meta: RequestMeta; enroll: { name: string } | null },
) {
  const methodCtx = completing(ctx, ic, pending, "passkey");
  const outcome = input.enroll
    ? await enrollPasskeyAtSignIn(methodCtx, ic, pending, { credential: input.credential, name: input.enroll.name, meta: input.meta })
    : await verifyPasskeySecondFactor(methodCtx, ic, pending, input);
  if (outcome.kind === "signed_in") await clearPending(ctx.store, ic.uid);
  return outcome;
}

/** TOTP enrollment at the step that requires it was confirmed: the next step finishes the sign-in. */
export async function totpEnrolledAtStep(ctx: SignInContext<"store">, ic: InteractionContext, pending: PendingSecondFactor): Promise<void> {
  await savePending(ctx.store, ic.uid, { ...pending, enrolled: true });
}

/** After the recovery codes were shown: the confirmed enrollment was the second factor, and the sign-in completes. */
export async function signInAfterEnrollment(ctx: FlowContext, ic: InteractionContext, pending: PendingSecondFactor, meta: RequestMeta): Promise<string | null> {
  if (!pending.enrolled) return null;
  const { redirectTo } = await completing(ctx, ic, pending, "totp").prove(userActor(pending.userId, meta), async () => ({ value: null, proof: { userId: pending.userId } }));
  await clearPending(ctx.store, ic.uid);
  return redirectTo;
}

// ---------------------------------------------------------------------------------------------
// Consent

/** One line of the consent page: an OpenID scope by name, or an API resource's scope with the resource's name and its description. */
export interface ConsentScope {
  name: string;
  known: boolean;
  /** The API resource the scope belongs to, by its name; null for the organization's own scopes. */
  resource: string | null;
  description: string | null;
}

/** What the consent page lists: every scope the client asks for, known ones by name, API resources' by resource and description. */
export async function consentView(ctx: SignInContext<"cache">, ic: InteractionContext) {
  const details = ic.interaction.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const accountId = ic.interaction.session?.accountId;
  const asked = Object.entries(details.missingResourceScopes ?? {});
  // The organization itself (its issuer) is never an API resource: no lookup for a plain sign-in.
  const identifiers = asked.map(([identifier]) => identifier).filter((identifier) => identifier !== ic.tenant.issuer);
  const [user, resources] = await Promise.all([
    accountId ? getUserById(ctx.db, ctx.cache, accountId) : null,
    identifiers.length === 0
      ? []
      : ctx.db.apiResource.findMany({ where: { organizationId: ic.organization.id, identifier: { in: identifiers } }, select: { identifier: true, name: true, scopeDescriptions: true } }),
  ]);
  const byIdentifier = new Map(resources.map((r) => [r.identifier, r]));
  const lines = new Map<string, ConsentScope>();
  const own = (name: string) => lines.set(`:${name}`, { name, known: KNOWN_SCOPES.has(name), resource: null, description: null });
  for (const name of details.missingOIDCScope ?? []) own(name);
  for (const [identifier, scopes] of asked) {
    const resource = byIdentifier.get(identifier);
    const descriptions = (resource?.scopeDescriptions ?? {}) as Record<string, unknown>;
    for (const name of scopes) {
      // The organization's own scopes (asked for the issuer itself) are listed as such.
      if (!resource) own(name);
      else {
        const description = Object.hasOwn(descriptions, name) && typeof descriptions[name] === "string" ? descriptions[name] : null;
        lines.set(`${identifier} ${name}`, { name, known: false, resource: resource.name, description });
      }
    }
  }
  return {
    email: user?.email ?? "",
    scopes: [...lines.values()],
    // A client described by its own metadata document names itself: the page always says where from.
    clientDomain: parseMetadataDocumentClientId(ic.client.id)?.hostname ?? null,
  };
}
