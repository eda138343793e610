import { data, type AppLoadContext } from "@remix-run/node";
import type { LoginMethod } from "../auth/login-methods";
import { refuseUnavailableMethod, type InteractionContext } from "./context";
import { isAfterAction, loadInteractionPage, NO_STORE, requestMeta, type PageFrame } from "./request";
import type { Language } from "~/i18n/config";

export type GateResult =
  | { open: true; context: InteractionContext; frame: PageFrame }
  | { open: false; response: ReturnType<typeof data<GateRefusal>> };

export type GateRefusal =
  | { view: "expired"; language: Language }
  | ({ view: "unavailable"; method: LoginMethod } & PageFrame)
  | ({ view: "csrf" } & PageFrame);

/**
 * The front door of the login-method endpoints: load the interaction, refuse a method that is
 * not effective (403, audited) before anything else happens, then (for POSTs) check CSRF.
 */
export async function passGate(
  request: Request,
  context: AppLoadContext,
  uid: string,
  method: LoginMethod,
  endpoint: string,
  form?: FormData,
): Promise<GateResult> {
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok) return { open: false, response: data<GateRefusal>({ view: "expired", language: loaded.language }, { status: 400, headers: NO_STORE }) };
  // Remix re-runs a page's loaders after its action, and a loader that passes this gate would
  // refuse (and audit) the same request a second time: the action's audit is the only one.
  const refused =
    !form && isAfterAction(context)
      ? !loaded.context.methods.includes(method)
      : await refuseUnavailableMethod(context.services, loaded.context, method, requestMeta(context, endpoint));
  if (refused) {
    return { open: false, response: data<GateRefusal>({ view: "unavailable", method, ...loaded.frame }, { status: 403, headers: NO_STORE }) };
  }
  if (form && !context.services.csrf.verify(uid, form.get("csrf"))) {
    return { open: false, response: data<GateRefusal>({ view: "csrf", ...loaded.frame }, { status: 403, headers: NO_STORE }) };
  }
  return { open: true, context: loaded.context, frame: loaded.frame };
}
