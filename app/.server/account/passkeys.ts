import { createHash } from "node:crypto";
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { UuidSchema } from "~/schemas/uuid";
import type { RequestMeta } from "../auth/actors";
import type { Context, StagedContext } from "../context";
import {
  beginRegistration,
  completeRegistration,
  deletePasskey,
  listPasskeys,
  parseCredential,
  RegistrationResponseSchema,
  renamePasskey,
  MAX_PASSKEYS_PER_USER,
  type ChallengeBinding,
  type PasskeyOwner,
  type PasskeyContext,
  type PasskeySummary,
} from "../passkeys/service";
import { maySubmitSensitive, type SignedIn } from "./session";

/**
 * A person's own passkeys on the account page (decision 041): register (named), list with last
 * use, rename, remove. Each change is sensitive (a recent sign-in, else the step-up) and audited
 * in its write. Under `required_passkey` the last passkey stays: it is the account's second factor.
 */
export interface AccountPasskeys {
  list: PasskeySummary[];
  max: number;
  mayAdd: boolean;
  mayRemove: boolean;
}

export async function readAccountPasskeys(ctx: Context, access: SignedIn): Promise<AccountPasskeys> {
  const list = await listPasskeys(ctx.db, access.user.id);
  return { list, max: MAX_PASSKEYS_PER_USER, mayAdd: list.length < MAX_PASSKEYS_PER_USER, mayRemove: access.organization.twoFactorPolicy !== "required_passkey" || list.length > 1 };
}

/** The registration challenge is bound to this browser's session at the organization. */
const registerBinding = (access: SignedIn): ChallengeBinding => ({ purpose: "register", subject: createHash("sha256").update(access.sessionKey).digest("base64url") });

const ownerOf = (access: SignedIn): PasskeyOwner => ({ organization: access.organization, user: access.user });

export type PasskeyRefusal = { ok: false; reason: "step_up" | "limit" | "invalid" | "duplicate" | "not_found" | "not_allowed" | "invalid_name" };

export async function beginAccountPasskey(ctx: PasskeyContext, access: SignedIn): Promise<{ ok: true; options: PublicKeyCredentialCreationOptionsJSON } | PasskeyRefusal> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  return beginRegistration(ctx, ownerOf(access), registerBinding(access));
}

export async function addAccountPasskey(
  ctx: PasskeyContext,
  access: SignedIn,
  input: { credential: unknown; name: string; meta: RequestMeta },
): Promise<{ ok: true; passkey: PasskeySummary } | PasskeyRefusal> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  const response = parseCredential(RegistrationResponseSchema, input.credential);
  if (!response) return { ok: false, reason: "invalid" };
  // The schema checked the shape; the library checks everything inside it.
  return completeRegistration(ctx, ownerOf(access), registerBinding(access), { response: response as unknown as RegistrationResponseJSON, name: input.name, meta: input.meta });
}

export async function renameAccountPasskey(staged: StagedContext, access: SignedIn, passkeyId: string, name: string): Promise<{ ok: true } | PasskeyRefusal> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  if (!UuidSchema.safeParse(passkeyId).success) return { ok: false, reason: "not_found" };
  return staged.transaction((ctx) =>
    renamePasskey(ctx, { organizationId: access.organization.id, userId: access.user.id }, passkeyId, name),
  );
}

export async function removeAccountPasskey(staged: StagedContext, access: SignedIn, passkeyId: string): Promise<{ ok: true } | PasskeyRefusal> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  if (!UuidSchema.safeParse(passkeyId).success) return { ok: false, reason: "not_found" };
  const userId = access.user.id;
  const organizationId = access.organization.id;
  return staged.transaction(async (ctx) => {
    if (access.organization.twoFactorPolicy === "required_passkey" && (await ctx.db.passkey.count({ where: { userId } })) <= 1) return { ok: false as const, reason: "not_allowed" as const };
    const removed = await deletePasskey(ctx.db, { organizationId, userId }, passkeyId);
    if (!removed) return { ok: false as const, reason: "not_found" as const };
    ctx.audit({ eventType: "account.passkey.removed", organizationId, targetType: "user", targetId: userId, data: { passkeyId, name: removed.name } });
    return { ok: true as const };
  });
}
