import { data, type AppLoadContext } from "@remix-run/node";
import type { LoginMethod } from "~/schemas/login-methods";
import type { RequestMeta } from "../auth/actors";
import { anonymousActor } from "../auth/actors";
import { stagedContext, type CollaboratorName, type UnitRunner } from "../context";
import { auditMethodRefusal } from "./method-refusal";
import { readForm } from "../http/form";
import type { Services } from "../services";
import type { SignInContext } from "./method";
import type { InteractionContext } from "./interaction";
import { isAfterAction, loadInteractionPage, NO_STORE, type ExpiredFrame, type PageFrame } from "./page";

/**
 * The front door of every interaction route (/interaction/:uid and the pages below it). In this
 * order, before the route does anything of its own:
 *   1. load the interaction (unknown, expired, finished or another browser's: the expired page,
 *      400, branded with the way back to the application when the uid's organization is known);
 *   2. for a route that belongs to a login method, refuse the method when it is not effective for
 *      the client (403, `security.login_method_disabled`), before any user lookup and before CSRF;
 *   3. for a POST, check the form's CSRF token (403).
 * The route gets the interaction, the page frame, the posted form and where the request came from.
 */
export type GateRefusal =
  | ({ view: "expired" } & ExpiredFrame)
  | ({ view: "unavailable"; method: LoginMethod } & PageFrame)
  | ({ view: "csrf" } & PageFrame);

export interface OpenGate {
  open: true;
  uid: string;
  context: InteractionContext;
  frame: PageFrame;
  /** The posted form (empty for a GET). */
  form: FormData;
  meta: RequestMeta;
  /** The unit of work of the request: what every sign-in step is handed instead of the services. */
  ctx: SignInContext<CollaboratorName>;
}

/** The magic-link callback goes on without its interaction (the link is consumed all the same). */
export interface OpenGateWithoutInteraction extends Omit<OpenGate, "context" | "frame"> {
  context: null;
  frame: null;
}

export interface ClosedGate {
  open: false;
  refusal: GateRefusal;
  /** The refusal as the shared refusal page shows it; a route with its own presentation maps `refusal`. */
  response: ReturnType<typeof data<GateRefusal>>;
  form: FormData;
}

export type GateOptions =
  /** The login method the route belongs to, and the endpoint as the audit entry names it. */
  | { method: LoginMethod; endpoint: string; interaction?: undefined }
  /**
   * A route of a login method that only forwards (it writes nothing and needs no interaction):
   * the method is refused when this browser's interaction is loaded and its client lacks it;
   * without an interaction the route goes on, and there is no CSRF token to check.
   */
  | { method: LoginMethod; endpoint: string; interaction: "forward" }
  | { method?: undefined; endpoint?: undefined; interaction?: "required" | "optional" };

interface RouteArgs {
  request: Request;
  params: { uid?: string };
  context: AppLoadContext;
}

export function passGate(args: RouteArgs, options: GateOptions & { interaction: "optional" | "forward" }): Promise<OpenGate | OpenGateWithoutInteraction | ClosedGate>;
export function passGate(args: RouteArgs, options?: GateOptions): Promise<OpenGate | ClosedGate>;
export async function passGate({ request, params, context }: RouteArgs, options: GateOptions = {}): Promise<OpenGate | OpenGateWithoutInteraction | ClosedGate> {
  const uid = params.uid!;
  const { services } = context;
  const meta: RequestMeta = { ip: context.req.ip ?? null, requestId: context.requestId };
  const ctx = unitOfWork(services, meta);
  const form = request.method === "POST" ? await readForm(request) : new FormData();
  const closed = (refusal: GateRefusal, status: number): ClosedGate => ({
    open: false,
    refusal,
    response: data<GateRefusal>(refusal, { status, headers: NO_STORE }),
    form,
  });

  const loaded = await loadInteractionPage(request, context, ctx, uid);
  if (!loaded.ok && options.interaction !== "optional" && options.interaction !== "forward") return closed({ view: "expired", ...loaded.expired }, 400);

  if (loaded.ok && options.method && !(await methodAllowed(ctx, request, context, loaded.context, options.method, options.endpoint, meta))) {
    return closed({ view: "unavailable", method: options.method, ...loaded.frame }, 403);
  }

  if (request.method === "POST" && options.interaction !== "forward" && !services.csrf.verify(uid, form.get("csrf"))) {
    // Without an interaction (the magic-link callback) there is no frame to show: the route maps it.
    return closed(loaded.ok ? { view: "csrf", ...loaded.frame } : { view: "expired", ...loaded.expired }, 403);
  }
  return loaded.ok
    ? { open: true, uid, context: loaded.context, frame: loaded.frame, form, meta, ctx }
    : { open: true, uid, context: null, frame: null, form, meta, ctx };
}

/**
 * The unit of work a sign-in route hands its steps (as the Admin API's runOperation hands its
 * handlers one, admin/http/route.ts): reads outside any transaction, as the anonymous visitor,
 * and `transaction`, the one place sign-in code opens a transaction. A step verifies first (an
 * Argon2id hash, a signature, an upstream's answer) and writes after, so the transaction cannot
 * span the request: each write is a unit of its own, with the actor it proved.
 */
export function unitOfWork(services: Services, meta: RequestMeta): SignInContext<CollaboratorName> {
  return { ...stagedContext(services, anonymousActor(meta)), query: services.db.query };
}

/**
 * The same unit of work for the pages about a link or the end of a flow that pass no gate (a
 * reset or an invitation link, a federation callback, "password changed"), from the request.
 */
export const visitorContext = (context: AppLoadContext) => unitOfWork(context.services, { ip: context.req.ip ?? null, requestId: context.requestId });

/**
 * The answers of the JSON endpoints the pages' scripts call (passkeys, the magic-link poll): a
 * closed gate (400 for an expired interaction, else 403), where the browser goes once signed in,
 * and a refused attempt past a limit (429 with Retry-After in seconds, the page shows minutes).
 */
export const closedGateJson = (gate: ClosedGate) => Response.json({ error: gate.refusal.view }, { status: gate.refusal.view === "expired" ? 400 : 403, headers: NO_STORE });

export const signedInJson = (redirectTo: string) => Response.json({ redirectTo }, { headers: NO_STORE });

export const rateLimitedJson = (retryAfterSeconds: number) =>
  Response.json({ error: "rate_limited", minutes: Math.ceil(retryAfterSeconds / 60) }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(retryAfterSeconds) } });

/**
 * Whether the route's login method is effective for the client; a refusal is audited. Remix
 * re-runs a page's loaders after its action, and a loader that refused (and audited) the same
 * request a second time would double the entry: the action's audit is the only one.
 */
async function methodAllowed(
  ctx: UnitRunner,
  request: Request,
  context: AppLoadContext,
  ic: InteractionContext,
  method: LoginMethod,
  endpoint: string,
  meta: RequestMeta,
): Promise<boolean> {
  if (ic.methods.includes(method)) return true;
  if (request.method !== "POST" && isAfterAction(context)) return false;
  await auditMethodRefusal(ctx, meta, { organizationId: ic.organization.id, clientId: ic.client.id, method, endpoint });
  return false;
}
