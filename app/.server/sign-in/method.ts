import type { Prisma } from "~/generated/prisma/client";
import type { LoginMethod } from "~/schemas/login-methods";
import type { Actor, CollaboratorName, FullContext, StagedContext } from "../context";
import type { Database } from "../db/client";
import type { SecondFactorUsed } from "./amr";

/**
 * The contract between the sign-in flow (flow.ts) and its methods (methods/*.ts). A method checks
 * what it was given (a password, a link, a passkey's signature, an upstream's answer, a code) and,
 * when that proves who signs in, returns a proof from the transaction of its own writes; the flow
 * records the sign-in in that same transaction (finish.ts). A method never imports another method
 * nor the flow: what they share lives beside them in sign-in/ (the plan, the pending step, limits).
 */

/**
 * What the door hands a sign-in step (door.ts): a staged context (context.ts) whose reads act as
 * the anonymous visitor and whose writes name the actor they proved, and one statement straight
 * to the driver, outside any transaction, for the hot paths that count before they check (db/client.ts).
 */
export type SignInContext<C extends CollaboratorName = never> = StagedContext<C> & Pick<Database, "query">;

/**
 * A step's own changes to the user row (a lockout reset, a rehashed password), written in the
 * same UPDATE as `lastLoginAt`: every statement of a sign-in costs about a millisecond of CPU
 * (docs/benchmarks.md).
 */
export type UserChanges = Pick<Prisma.UserUpdateInput, "failedLoginCount" | "lockedUntil" | "passwordHash" | "legacyPassword">;

/** What a method proved: who signs in, and what only the method knows about how. */
export interface Proof {
  userId: string;
  changes?: UserChanges;
  /** How the passkey that signed in (or was the second factor) holds its key (RFC 8176 hwk or swk; decision 041). */
  passkey?: "hwk" | "swk";
  /** A federated sign-in: the upstream provider (named in the audit entry), and whether its sign-in counts as multi-factor (decision 046). */
  provider?: { id: string; name: string };
  upstreamMfa?: boolean;
}

/** A transaction's answer: the step's own result, and the proof when it proved who signs in. */
export interface Proved<T> {
  value: T;
  proof: Proof | null;
}

export interface Signed<T> {
  value: T;
  /** Where the browser goes next when the sign-in completed (the provider's resume URL); null otherwise. */
  redirectTo: string | null;
}

/**
 * Runs a step's work in one transaction; when the work returns a proof, the sign-in is recorded
 * in that transaction (finish.ts) and handed to the provider once it committed.
 */
export type Prove = <T>(actor: Actor, work: (tx: FullContext) => Promise<Proved<T>>) => Promise<Signed<T>>;

/** What the flow hands a method: the door's context and the runner that records its proof. */
export type MethodContext<C extends CollaboratorName = never> = SignInContext<C> & { prove: Prove };

/** A way to prove who signs in on its own (the login methods of an organization or client). */
export interface FirstFactor {
  kind: "first";
  method: LoginMethod;
}

/** A way to complete a sign-in that a first factor began (after a password, or an upstream not trusted for two factors). */
export interface SecondFactor {
  kind: "second";
  factor: SecondFactorUsed;
}
