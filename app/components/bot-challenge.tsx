import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { BOT_CHALLENGE_FIELD, BOT_CHALLENGE_SCRIPT_PATH, type BotChallenge, type BotChallengeFailure } from "~/schemas/bot-challenge";
import { FormMessage } from "./auth-card";
import { botChallengePayload, solveBotChallenge } from "./bot-challenge-solver";

/**
 * An organization's proof-of-work challenge in a React form (decision 091), solved without
 * ALTCHA's web component (no worker, no shadow DOM, no inline style for the CSP to allow). The
 * page's first challenge is started by the same-origin solver script loaded right after the field
 * (bot-challenge-page.ts), which runs while the page is still being read: a form sent before the
 * page hydrates is held by it, not sent without the answer. Once hydrated, this follows that
 * script (its `bot-challenge-state` events), and solves any later challenge itself (a refused post
 * answered in place brings a fresh one), with the same search (bot-challenge-solver.ts), holding a
 * form sent before the answer is found. The hidden field is left to whichever solver fills it.
 * Progress is read out (role="status"); without script the form says what to do, and a post
 * without the answer is refused with the same advice.
 */
type Status = "idle" | "checking" | "ready" | "unsupported";

const isStatus = (value: string | undefined): value is Status => value === "checking" || value === "ready" || value === "unsupported";

export function BotChallengeField({ challenge }: { challenge: BotChallenge | null }) {
  const { t } = useTranslation();
  const [status, setStatus] = useState<Status>("idle");
  const field = useRef<HTMLInputElement>(null);
  const held = useRef<HTMLElement | true | null>(null);
  const challengeText = challenge ? JSON.stringify(challenge) : "";

  useEffect(() => {
    if (!challenge) return;
    const input = field.current;
    const form = input?.form;
    if (!input || !form) return;
    if (input.dataset.solver === "page" && input.dataset.solved === challengeText) {
      // The page's script has this one: follow it.
      const follow = () => {
        if (isStatus(input.dataset.state)) setStatus(input.dataset.state);
      };
      follow();
      input.addEventListener("bot-challenge-state", follow);
      return () => input.removeEventListener("bot-challenge-state", follow);
    }
    input.value = "";
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
      input.value = botChallengePayload(challenge, number, Date.now() - started);
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
  }, [challenge, challengeText]);

  if (!challenge) return null;
  return (
    <>
      {/* The challenge in the markup too: what the page's script, or a client that solves it without it, reads. */}
      {/* No value prop: a hidden input's value is its attribute, which React would reset when it hydrates (after the page's script filled it). */}
      <input ref={field} type="hidden" name={BOT_CHALLENGE_FIELD} data-challenge={challengeText} />
      {/* The page's script writes here before the page hydrates: the text it finds is not React's to correct. */}
      <p
        id="bot-challenge-status"
        className="challenge-status"
        role="status"
        aria-live="polite"
        data-checking={t("botChallenge.checking")}
        data-ready={t("botChallenge.ready")}
        data-unsupported={t("botChallenge.unsupported")}
        suppressHydrationWarning
      >
        {status === "idle" ? "" : t(`botChallenge.${status}`)}
      </p>
      <noscript>
        <FormMessage tone="info">{t("botChallenge.noScript")}</FormMessage>
      </noscript>
      <script src={BOT_CHALLENGE_SCRIPT_PATH} />
    </>
  );
}

/** A refused proof, said next to the form that is shown again with a fresh challenge. */
export const botChallengeMessage = (t: (key: string) => string, reason: BotChallengeFailure) => t(`botChallenge.refused.${reason}`);
