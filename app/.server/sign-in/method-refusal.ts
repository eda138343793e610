import type { LoginMethod } from "~/schemas/login-methods";
import { anonymousActor, type RequestMeta } from "../auth/actors";
import type { UnitRunner } from "../context";

/**
 * The audit entry of a login method refused because it is not effective for the client (spec:
 * `security.login_method_disabled`), whichever endpoint refused it: an interaction page, a magic
 * link's callback or a reset link.
 */
export async function auditMethodRefusal(
  ctx: UnitRunner,
  meta: RequestMeta,
  refused: { organizationId: string; clientId: string | null; method: LoginMethod; endpoint: string },
): Promise<void> {
  await ctx.transaction(anonymousActor(meta), async (tx) => {
    tx.audit({
      eventType: "security.login_method_disabled",
      organizationId: refused.organizationId,
      ...(refused.clientId ? { targetType: "client", targetId: refused.clientId } : {}),
      data: { attemptedMethod: refused.method, clientId: refused.clientId, organizationId: refused.organizationId, endpoint: refused.endpoint },
    });
  });
}
