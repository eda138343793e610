import type { Actor } from "../context";

/** Where a request came from, as the audit trail records it. */
export interface RequestMeta {
  ip: string | null;
  requestId: string | null;
}

/**
 * Who acts in a sign-in's transaction. Before the account is known (a failed password, a refused
 * method) the actor is anonymous; once a step has proved who signs in, it is that user. Mail jobs
 * act as the system, from the address that asked for the mail.
 */
export const anonymousActor = (meta: RequestMeta): Actor => ({ type: "anonymous", id: null, ip: meta.ip, requestId: meta.requestId });

export const userActor = (userId: string, meta: RequestMeta): Actor => ({ type: "user", id: userId, ip: meta.ip, requestId: meta.requestId });

export const systemActor = (ip: string | null): Actor => ({ type: "system", id: null, ip, requestId: null });

/** For writes that record no audit entry and have no request behind them. */
export const NO_REQUEST: RequestMeta = { ip: null, requestId: null };
