import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { BOT_CHALLENGE_FIELD, type BotChallenge, type BotChallengeFailure } from "~/schemas/bot-challenge";
import { FormMessage } from "./auth-card";

/**
 * The solver of an organization's proof-of-work challenge (decision 091): part of the page's own
 * script rather than ALTCHA's web component (no worker, no shadow DOM, no inline style for the
 * CSP to allow). Once the page is live it tries 0..maxnumber with WebCrypto's SHA-256 until
 * `salt + n` hashes to the challenge, yielding to the page every few hundred tries, and puts
 * ALTCHA's payload (base64 JSON) in the hidden field. A form sent before that is held and sent
 * when the answer is found. Its progress is read out (role="status"); without script the form
 * says what to do, and a post without the answer is refused with the same advice.
 */
type Status = "idle" | "checking" | "ready" | "unsupported";

const YIELD_EVERY = 400;

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function solve(challenge: BotChallenge, cancelled: () => boolean): Promise<number | null> {
  const encoder = new TextEncoder();
  for (let n = 0; n <= challenge.maxnumber; n++) {
    if (cancelled()) return null;
    if (hex(await crypto.subtle.digest("SHA-256", encoder.encode(`${challenge.salt}${n}`))) === challenge.challenge) return n;
    if (n % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return null;
}

export function BotChallengeField({ challenge }: { challenge: BotChallenge | null }) {
  const { t } = useTranslation();
  const [status, setStatus] = useState<Status>("idle");
  const [payload, setPayload] = useState("");
  const field = useRef<HTMLInputElement>(null);
  const held = useRef<HTMLElement | true | null>(null);

  useEffect(() => {
    if (!challenge) return;
    const form = field.current?.form;
    if (!form) return;
    if (typeof crypto === "undefined" || !crypto.subtle) {
      setStatus("unsupported");
      return;
    }
    let done = false;
    let stopped = false;
    const hold = (event: SubmitEvent) => {
      if (done) return;
      event.preventDefault();
      held.current = event.submitter ?? true;
      setStatus("checking");
    };
    form.addEventListener("submit", hold);
    setStatus("checking");
    const started = Date.now();
    void solve(challenge, () => stopped).then((number) => {
      if (stopped) return;
      if (number === null) return setStatus("unsupported");
      const solution = { algorithm: challenge.algorithm, challenge: challenge.challenge, number, salt: challenge.salt, signature: challenge.signature, took: Date.now() - started };
      // Set on the element too: a held form is sent in this same task, before React renders again.
      const value = btoa(JSON.stringify(solution));
      if (field.current) field.current.value = value;
      setPayload(value);
      done = true;
      setStatus("ready");
      const submitter = held.current;
      held.current = null;
      if (submitter) form.requestSubmit(submitter === true ? undefined : submitter);
    });
    return () => {
      stopped = true;
      form.removeEventListener("submit", hold);
    };
  }, [challenge]);

  if (!challenge) return null;
  return (
    <>
      {/* The challenge in the markup too: what a client that solves it without this script reads. */}
      <input ref={field} type="hidden" name={BOT_CHALLENGE_FIELD} value={payload} readOnly data-challenge={JSON.stringify(challenge)} />
      <p className="challenge-status" role="status" aria-live="polite">
        {status === "idle" ? "" : t(`botChallenge.${status}`)}
      </p>
      <noscript>
        <FormMessage tone="info">{t("botChallenge.noScript")}</FormMessage>
      </noscript>
    </>
  );
}

/** A refused proof, said next to the form that is shown again with a fresh challenge. */
export const botChallengeMessage = (t: (key: string) => string, reason: BotChallengeFailure) => t(`botChallenge.refused.${reason}`);
