import { BOT_CHALLENGE_FIELD } from "~/schemas/bot-challenge";
import { botChallengePayload, solveBotChallenge } from "./bot-challenge-solver";

/**
 * The solver of the pages the provider renders as plain HTML (the device-code entry form,
 * oidc/edge/pages.ts), served as one small same-origin script (`BOT_CHALLENGE_SCRIPT_PATH`, which
 * the Content-Security-Policy's `script-src 'self'` admits without a nonce). It does what
 * BotChallengeField does in the React forms: searches with the same function, puts the payload
 * in the hidden field, holds a form sent early, and says where it is in the page's status line,
 * whose texts the page carries in data attributes (already in the person's language).
 * Self-contained like the search: the script is built from the functions' source text.
 */
export function runPageSolver(solve: typeof solveBotChallenge, payloadOf: typeof botChallengePayload, fieldName: string): void {
  const field = document.querySelector<HTMLInputElement>(`input[name="${fieldName}"][data-challenge]`);
  const status = document.getElementById("bot-challenge-status");
  const form = field?.form;
  if (!field || !form || !status) return;
  const say = (key: "checking" | "ready" | "unsupported") => {
    status.textContent = status.dataset[key] ?? "";
  };
  if (typeof crypto === "undefined" || !crypto.subtle) return say("unsupported");
  const challenge = JSON.parse(field.dataset.challenge ?? "null") as Parameters<typeof solve>[0];
  let done = false;
  let held: HTMLElement | true | null = null;
  form.addEventListener("submit", (event) => {
    if (done) return;
    event.preventDefault();
    held = event.submitter ?? true;
    say("checking");
  });
  say("checking");
  const started = Date.now();
  void solve(challenge, () => false).then((number) => {
    if (number === null) return say("unsupported");
    field.value = payloadOf(challenge, number, Date.now() - started);
    done = true;
    say("ready");
    const submitter: HTMLElement | true | null = held;
    held = null;
    if (submitter) form.requestSubmit(submitter === true ? undefined : submitter);
  });
}

/** The script's text: the runner called with the search and the payload builder, as they are in the forms' bundle. */
export const PAGE_SOLVER_SCRIPT = `(${runPageSolver.toString()})(${solveBotChallenge.toString()}, ${botChallengePayload.toString()}, ${JSON.stringify(BOT_CHALLENGE_FIELD)});\n`;
