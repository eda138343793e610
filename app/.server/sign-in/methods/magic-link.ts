import { effectiveLoginMethods } from "~/schemas/login-methods";
import { getClientRecord } from "../../directory/clients";
import { getOrganizationBySlug } from "../../directory/organizations";
import type { Context } from "../../context";
import type { InteractionContext } from "../interaction";
import { userActor, type RequestMeta } from "../../auth/actors";
import { auditMethodRefusal } from "../method-refusal";
import { checkPairing, isConfirmed, markConfirmed, pairingCode, takeConfirmed } from "../magic-link-pairing";
import { lookupInteractionOrganization } from "../../oidc/storage/adapter";
import type { FirstFactor, Prove, SignInContext } from "../method";

/**
 * Signing in with a magic link (spec "Magic link rules"; asking for one is
 * ../magic-link-request.ts). At the callback the organization and interaction in the link are
 * untrusted: they must equal what was stored, and a mismatch neither tells nor consumes anything.
 */
export const magicLink: FirstFactor = { kind: "first", method: "magic_link" };

/** What the magic-link steps are handed: the door's context and, when an interaction can be signed in to, the flow's runner. */
type LinkContext = SignInContext<"store" | "tokens" | "cache"> & { prove: Prove | null };

export type MagicLinkSignIn =
  | { status: "signed_in"; redirectTo: string }
  /** Invalid, expired, used, or another organization's or interaction's: one generic failure. */
  | { status: "invalid" }
  | { status: "method_disabled" }
  /** The link is used, but its interaction is gone from this browser: a new link must be requested. */
  | { status: "continuation_lost" }
  /** Another browser than the asking one, whose sign-in is still open: ask for the asking page's number (nothing consumed yet). */
  | { status: "confirm_elsewhere" };

export type MagicLinkPairing =
  | { status: "confirmed_elsewhere" }
  | { status: "wrong_code" }
  /** Too many wrong numbers: the link is burnt. */
  | { status: "pairing_exhausted" }
  | { status: "invalid" }
  | { status: "method_disabled" }
  | { status: "continuation_lost" };

type UsableLink = { id: string; userId: string; organizationId: string; clientId: string | null };

/**
 * Signs in with a link. Organization slug and interaction uid come from the request and are
 * compared with the stored ones before anything changes. The consumption, its
 * `auth.magic_link.verified` entry and the sign-in (../finish.ts) commit in one transaction; when
 * the interaction cannot continue (`at` is null: this browser has none, or it is not a login),
 * the link is consumed all the same and the person must ask for a new one.
 */
export async function signInWithMagicLink(
  ctx: LinkContext,
  input: { token: string; organizationSlug: string; interactionUid: string; at: InteractionContext | null; meta: RequestMeta },
): Promise<MagicLinkSignIn> {
  const link = await findUsableLink(ctx, input);
  if (link.status !== "usable") return link;
  const { row } = link;

  const consume = (tx: Context) => consumeLink(tx, row);
  const actor = userActor(row.userId, input.meta);
  const ic = input.at;
  if (!ic && (await canPairWith(ctx, input.interactionUid, row))) return { status: "confirm_elsewhere" };
  if (!ic || !ctx.prove || ic.organization.id !== row.organizationId || ic.interaction.prompt.name !== "login") {
    return (await ctx.transaction(actor, consume)) ? { status: "continuation_lost" } : { status: "invalid" };
  }
  const { redirectTo } = await ctx.prove(actor, async (tx) => ({ value: null, proof: (await consume(tx)) ? { userId: row.userId } : null }));
  return redirectTo ? { status: "signed_in", redirectTo } : { status: "invalid" };
}

/** Uses the link up with its `auth.magic_link.verified` entry; false when another request used it first. */
async function consumeLink(ctx: Context, row: UsableLink): Promise<boolean> {
  const now = new Date();
  const consumed = await ctx.db.magicLinkToken.updateMany({ where: { id: row.id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
  if (consumed.count !== 1) return false;
  ctx.audit({ eventType: "auth.magic_link.verified", organizationId: row.organizationId, targetType: "user", targetId: row.userId, data: {} });
  return true;
}

/** Whether the link's own interaction is still open somewhere and showing a number. */
async function canPairWith(ctx: Context<"store">, interactionUid: string, row: UsableLink): Promise<boolean> {
  if ((await lookupInteractionOrganization(ctx.store, interactionUid)) !== row.organizationId) return false;
  return (await pairingCode(ctx.store, interactionUid)) !== null;
}

/** How long the asking page may take to notice the confirmation. */
const CONFIRMED_TTL_SECONDS = 10 * 60;

/**
 * The other browser's answer (decision 033): the link is checked exactly as for a sign-in, then the
 * typed number. A match uses the link up (its entry committed) and lets the asking browser finish;
 * a wrong number changes nothing but the count; the third burns the link. When the pairing is gone
 * (the asking page asked again, or it lapsed) the link is used up as a lost continuation.
 */
export async function confirmMagicLinkElsewhere(
  ctx: SignInContext<"store" | "tokens" | "cache">,
  input: { token: string; organizationSlug: string; interactionUid: string; code: string; meta: RequestMeta },
): Promise<MagicLinkPairing> {
  const link = await findUsableLink(ctx, input);
  if (link.status !== "usable") return link;
  const { row } = link;
  const check = await checkPairing(ctx.store, input.interactionUid, input.code);
  if (check === "wrong") return { status: "wrong_code" };
  const consumed = await ctx.transaction(userActor(row.userId, input.meta), (tx) => consumeLink(tx, row));
  if (!consumed) return { status: "invalid" };
  if (check === "exhausted") return { status: "pairing_exhausted" };
  if (check === "none") return { status: "continuation_lost" };
  await markConfirmed(ctx.store, input.interactionUid, row.userId, CONFIRMED_TTL_SECONDS);
  return { status: "confirmed_elsewhere" };
}

/**
 * The asking browser finishes a sign-in another browser confirmed: the link is already used (its
 * entry committed there), so this is the sign-in alone, once (`takeConfirmed`).
 */
export async function finishConfirmedElsewhere(ctx: SignInContext<"store"> & { prove: Prove }, input: { at: InteractionContext; meta: RequestMeta }): Promise<string | null> {
  const ic = input.at;
  if (ic.interaction.prompt.name !== "login") return null;
  const userId = await takeConfirmed(ctx.store, ic.uid);
  if (!userId) return null;
  const user = await ctx.db.user.findUnique({ where: { id: userId }, select: { status: true, organizationId: true } });
  if (!user || user.status !== "active" || user.organizationId !== ic.organization.id) return null;
  const { redirectTo } = await ctx.prove(userActor(userId, input.meta), async () => ({ value: null, proof: { userId } }));
  return redirectTo;
}

/** The number the asking page shows for a link opened on another device ("" when none was asked for). */
export async function pairingCodeFor(ctx: Context<"store">, uid: string): Promise<string> {
  return (await pairingCode(ctx.store, uid)) ?? "";
}

/** Whether another browser has confirmed this interaction's link (the asking page polls it). */
export function confirmedElsewhere(ctx: Context<"store">, uid: string): Promise<boolean> {
  return isConfirmed(ctx.store, uid);
}

/** The checks that change nothing: the link, its authority (organization, interaction), its method, its user. */
async function findUsableLink(
  ctx: SignInContext<"tokens" | "cache">,
  input: { token: string; organizationSlug: string; interactionUid: string; meta: RequestMeta },
): Promise<{ status: "usable"; row: UsableLink } | { status: "invalid" } | { status: "method_disabled" }> {
  const prisma = ctx.db;
  const invalid = { status: "invalid" } as const;
  if (input.token.length < 20 || input.token.length > 100) return invalid;
  const row = await prisma.magicLinkToken.findUnique({ where: { tokenHash: ctx.tokens.hash(input.token) } });
  if (!row) return invalid;
  const organization = await getOrganizationBySlug(prisma, ctx.cache, input.organizationSlug);
  if (!organization || organization.id !== row.organizationId || organization.status !== "active") return invalid;
  if (row.interactionUid !== input.interactionUid) return invalid;
  if (row.consumedAt || row.expiresAt <= new Date()) return invalid;

  // The organization (or the client's override) may have turned magic links off since sending.
  const client = row.clientId ? await getClientRecord(prisma, ctx.cache, row.clientId) : null;
  const methods = effectiveLoginMethods(client ?? { loginMethods: [] }, organization);
  if (!methods.includes("magic_link")) {
    await auditMethodRefusal(ctx, input.meta, {
      organizationId: organization.id,
      clientId: row.clientId,
      method: "magic_link",
      endpoint: "POST /interaction/:uid/magic-link/verify",
    });
    return { status: "method_disabled" };
  }

  const user = await prisma.user.findUnique({ where: { id: row.userId }, select: { status: true } });
  if (!user || user.status !== "active") return invalid;
  return { status: "usable", row };
}
