import { browserSupportsWebAuthn, browserSupportsWebAuthnAutofill, startAuthentication, startRegistration, WebAuthnAbortService } from "@simplewebauthn/browser";
import { useEffect, useId, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { FormMessage } from "./auth-card";

/**
 * The passkey buttons (decision 041): progressive enhancement over pages that work without
 * JavaScript. Until the script runs the button is disabled and a <noscript> note says why; a
 * browser without WebAuthn gets a plain message. The ceremony posts plain forms (CSRF token
 * included) to the page's passkey endpoint: `intent=options` for the challenge, then the
 * signed credential as JSON in the `credential` field.
 */
type Problem = "failed" | "cancelled" | "rate_limited" | "unavailable" | "limit" | "duplicate" | "csrf";

async function postForm(url: string, fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: "POST", body: new URLSearchParams(fields), headers: { Accept: "application/json" }, credentials: "same-origin" });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, body };
}

function problemOf(status: number, body: Record<string, unknown>): Problem {
  if (status === 429) return "rate_limited";
  if (body.error === "unavailable") return "unavailable";
  if (body.error === "limit") return "limit";
  if (body.error === "duplicate") return "duplicate";
  if (body.error === "csrf" || body.error === "expired") return "csrf";
  return "failed";
}

/** A sign-in too old for a sensitive change: off to sign in again, as the account page's forms do. */
function stepUp(body: Record<string, unknown>): boolean {
  if (body.error !== "step_up" || typeof body.stepUpUrl !== "string") return false;
  window.location.assign(body.stepUpUrl);
  return true;
}

const isCancel = (error: unknown) => error instanceof Error && (error.name === "NotAllowedError" || error.name === "AbortError");

function useWebAuthn(): boolean | null {
  const [supported, setSupported] = useState<boolean | null>(null);
  useEffect(() => setSupported(browserSupportsWebAuthn()), []);
  return supported;
}

function ProblemMessage({ problem }: { problem: Problem | null }) {
  const { t } = useTranslation();
  if (!problem) return null;
  return <FormMessage tone="error">{t(`passkey.problem.${problem}`)}</FormMessage>;
}

function Support({ supported, children }: { supported: boolean | null; children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <>
      <noscript>
        <p className="hint">{t("passkey.noScript")}</p>
      </noscript>
      {supported === false ? <p className="hint">{t("passkey.unsupported")}</p> : children}
    </>
  );
}

/**
 * "Sign in with a passkey" (the login page) or "Use your passkey" (the second-factor step). With
 * `autofill`, where the browser supports conditional UI, the page's email field also offers the
 * passkeys in its autofill list (`autocomplete="username webauthn"`); the button aborts that
 * quiet ceremony and starts its own, with a challenge of its own.
 */
export function PasskeySignIn({ endpoint, csrf, label, secondary = false, autofill = false }: { endpoint: string; csrf: string; label: string; secondary?: boolean; autofill?: boolean }) {
  const supported = useWebAuthn();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  useEffect(() => {
    if (!autofill) return;
    let active = true;
    void (async () => {
      if (!(await browserSupportsWebAuthnAutofill())) return;
      const start = await postForm(endpoint, { csrf, intent: "options" });
      if (!active || start.status !== 200) return;
      try {
        const credential = await startAuthentication({ optionsJSON: start.body.options as Parameters<typeof startAuthentication>[0]["optionsJSON"], useBrowserAutofill: true });
        const done = await postForm(endpoint, { csrf, intent: "verify", credential: JSON.stringify(credential) });
        if (done.status === 200 && typeof done.body.redirectTo === "string") window.location.assign(done.body.redirectTo);
        else if (active) setProblem(problemOf(done.status, done.body));
      } catch {
        // Aborted by the button or by leaving the page: nothing to say.
      }
    })().catch(() => undefined);
    return () => {
      active = false;
    };
  }, [autofill, endpoint, csrf]);

  async function run() {
    setBusy(true);
    setProblem(null);
    try {
      const start = await postForm(endpoint, { csrf, intent: "options" });
      if (start.status !== 200) return setProblem(problemOf(start.status, start.body));
      WebAuthnAbortService.cancelCeremony();
      const credential = await startAuthentication({ optionsJSON: start.body.options as Parameters<typeof startAuthentication>[0]["optionsJSON"] });
      const done = await postForm(endpoint, { csrf, intent: "verify", credential: JSON.stringify(credential) });
      if (done.status === 200 && typeof done.body.redirectTo === "string") {
        window.location.assign(done.body.redirectTo);
        return;
      }
      setProblem(problemOf(done.status, done.body));
    } catch (error) {
      setProblem(isCancel(error) ? "cancelled" : "failed");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="passkey">
      <ProblemMessage problem={problem} />
      <Support supported={supported}>
        <button className={secondary ? "button button-secondary" : "button"} type="button" disabled={supported !== true || busy} aria-busy={busy} onClick={() => void run()}>
          {label}
        </button>
      </Support>
    </div>
  );
}

/**
 * "Add a passkey": a name, then the browser's dialog. On the account page the page reloads with
 * the new passkey listed (`done`); at the sign-in step that requires one, the answer says where the
 * sign-in goes on (`redirectTo`).
 */
export function PasskeyRegister({ endpoint, csrf, done, optionsIntent = "options" }: { endpoint: string; csrf: string; done?: string; optionsIntent?: string }) {
  const { t } = useTranslation();
  const supported = useWebAuthn();
  const nameId = useId();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  async function run() {
    setBusy(true);
    setProblem(null);
    try {
      const start = await postForm(endpoint, { csrf, intent: optionsIntent });
      if (stepUp(start.body)) return;
      if (start.status !== 200) return setProblem(problemOf(start.status, start.body));
      const credential = await startRegistration({ optionsJSON: start.body.options as Parameters<typeof startRegistration>[0]["optionsJSON"] });
      const finished = await postForm(endpoint, { csrf, intent: "register", name, credential: JSON.stringify(credential) });
      if (stepUp(finished.body)) return;
      const next = typeof finished.body.redirectTo === "string" ? finished.body.redirectTo : done;
      if (finished.status === 200 && next) {
        window.location.assign(next);
        return;
      }
      setProblem(problemOf(finished.status, finished.body));
    } catch (error) {
      setProblem(isCancel(error) ? "cancelled" : "failed");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="passkey">
      <ProblemMessage problem={problem} />
      <Support supported={supported}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void run();
          }}
        >
          <div className="field">
            <label htmlFor={nameId}>{t("passkey.name")}</label>
            <input id={nameId} name="name" maxLength={64} value={name} onChange={(e) => setName(e.target.value)} placeholder={t("passkey.namePlaceholder")} />
          </div>
          <button className="button" type="submit" disabled={supported !== true || busy} aria-busy={busy}>
            {t("passkey.add")}
          </button>
        </form>
      </Support>
    </div>
  );
}
