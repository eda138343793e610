import type { Collaborators } from "../context";
import { clearSessionCookie, csrfSubject, currentSession, endSession, type SessionDeps } from "./session";
import { readForm } from "../http/form";

/**
 * Sign-out: the form must carry the session's CSRF token (a foreign page cannot sign anyone
 * out); the tokens are revoked at the provider and the session is deleted. Without a session
 * there is nothing to end.
 */
export async function signOut(services: SessionDeps & Pick<Collaborators, "csrf">, request: Request): Promise<{ ok: true; cookie: string } | { ok: false }> {
  const current = await currentSession(services, request);
  if (current) {
    const form = await readForm(request);
    if (!services.csrf.verify(csrfSubject(current.id), form.get("csrf"))) return { ok: false };
    await endSession(services, current.id, current.session);
  }
  return { ok: true, cookie: clearSessionCookie(services) };
}
