import type { FederatedIdentity } from "~/schemas/identity-provider";
import { UuidSchema } from "~/schemas/uuid";
import type { Context, StagedContext } from "../context";
import { deleteUserLink, listUserLinks } from "../federation/links";
import { maySubmitSensitive, type SignedIn } from "./session";

/** A person's links to upstream identity providers on the account page (decision 046). */
export function readAccountLinks(ctx: Context, access: SignedIn): Promise<FederatedIdentity[]> {
  return listUserLinks(ctx.db, access.user.id);
}

/** Removing a way to sign in is sensitive: it needs a recent sign-in, like removing a passkey. */
export async function removeAccountLink(staged: StagedContext, access: SignedIn, linkId: string): Promise<{ ok: true } | { ok: false; reason: "step_up" | "not_found" }> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  if (!UuidSchema.safeParse(linkId).success) return { ok: false, reason: "not_found" };
  const userId = access.user.id;
  return staged.transaction(async (ctx) => {
    const removed = await deleteUserLink(ctx.db, userId, linkId);
    if (!removed) return { ok: false as const, reason: "not_found" as const };
    ctx.audit({
      eventType: "account.federated_identity.removed",
      organizationId: access.organization.id,
      targetType: "user",
      targetId: userId,
      data: { linkId, providerId: removed.link.providerId, provider: removed.link.providerName },
    });
    return { ok: true as const };
  });
}
