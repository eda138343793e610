import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { BOT_CHALLENGE_FIELD, type BotChallenge, type BotChallengeFailure } from "~/schemas/bot-challenge";
import { FormMessage } from "./auth-card";
import { botChallengePayload, solveBotChallenge } from "./bot-challenge-solver";

/**
 * The solver of an organization's proof-of-work challenge (decision 091): part of the page's own
 * script rather than ALTCHA's web component (no worker, no shadow DOM, no inline style for the
 * CSP to allow). Once the page is live it searches (bot-challenge-solver.ts) and puts
 * ALTCHA's payload (base64 JSON) in the hidden field. A form sent before that is held and sent
 * when the answer is found. Its progress is read out (role="status"); without script the form
 * says what to do, and a post without the answer is refused with the same advice.
 */
type Status = "idle" | "checking" | "ready" | "unsupported";

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
    void solveBotChallenge(challenge, () => stopped).then((number) => {
      if (stopped) return;
      if (number === null) return setStatus("unsupported");
      // Set on the element too: a held form is sent in this same task, before React renders again.
      const value = botChallengePayload(challenge, number, Date.now() - started);
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
