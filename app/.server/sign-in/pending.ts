import type { KeyValueStore } from "../cache/store";
import type { SecondFactorMethod, SecondFactorPlan } from "./plan";

/**
 * "Password accepted, second factor pending" lives on the server, keyed by the interaction
 * uid, never in a cookie of its own. It expires with the step (15 minutes).
 */
export interface PendingSecondFactor {
  userId: string;
  organizationId: string;
  plan: SecondFactorPlan;
  chosen: SecondFactorMethod | null;
  /** TOTP enrollment during this login confirmed; the next step finishes the login. */
  enrolled: boolean;
  language: string;
  /** The first step when it was not a password: a federated sign-in whose provider is not trusted for 2FA (decision 046). */
  primary?: { method: "federated"; providerId: string; providerName: string };
}

/** How the sign-in that the second factor completes began, as finish.ts records it. */
export function primaryOf(pending: Pick<PendingSecondFactor, "primary">): { method: "password" | "federated"; provider?: { id: string; name: string } } {
  if (pending.primary?.method === "federated") return { method: "federated", provider: { id: pending.primary.providerId, name: pending.primary.providerName } };
  return { method: "password" };
}

const TTL_SECONDS = 15 * 60;
const key = (uid: string) => `2fa:pending:${uid}`;

export async function savePending(store: KeyValueStore, uid: string, pending: PendingSecondFactor): Promise<void> {
  await store.set(key(uid), JSON.stringify(pending), TTL_SECONDS);
}

export async function loadPending(store: KeyValueStore, uid: string): Promise<PendingSecondFactor | null> {
  const text = await store.get(key(uid));
  return text ? (JSON.parse(text) as PendingSecondFactor) : null;
}

export async function clearPending(store: KeyValueStore, uid: string): Promise<void> {
  await store.del(key(uid));
}
