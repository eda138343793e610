import { BOT_CHALLENGE_FIELD } from "~/schemas/bot-challenge";
import { botChallengePayload, solveBotChallenge } from "./bot-challenge-solver";

/**
 * The solver a page starts before anything else of its script (decision 091), served as one small
 * same-origin script (`BOT_CHALLENGE_SCRIPT_PATH`, which the Content-Security-Policy's
 * `script-src 'self'` admits without a nonce). The provider's plain-HTML pages (the device-code
 * entry form, oidc/edge/pages.ts) have no other script; the sign-in forms load it right after
 * their challenge field, so it runs while the page is still being read, long before the page's
 * own bundle hydrates (BotChallengeField then takes over what the runner started). It searches
 * with the same function as the bundle, puts the payload in the hidden field, holds a form sent
 * early, and says where it is in the page's status line, whose texts the page carries in data
 * attributes (already in the person's language). The hold listens on the window while capturing,
 * registered before entry.client.tsx's guard (which keeps events from React until it hydrates and
 * lets the browser send the form as it is): a form sent before the answer is found is held, not
 * sent without it. Self-contained like the search: the script is built from the functions' source
 * text. The field records what it is doing (`data-solver`, `data-state`, `data-solved`) and says
 * each change with a `bot-challenge-state` event, which is how the React field follows it.
 */
export function runPageSolver(solve: typeof solveBotChallenge, payloadOf: typeof botChallengePayload, fieldName: string): void {
  const fields = document.querySelectorAll<HTMLInputElement>(`input[name="${fieldName}"][data-challenge]`);
  const field = fields[fields.length - 1];
  const status = document.getElementById("bot-challenge-status");
  const form = field?.form;
  if (!field || !form || !status || field.dataset.solver) return;
  const challengeText = field.dataset.challenge ?? "null";
  field.dataset.solver = "page";
  field.dataset.solved = challengeText;
  const say = (key: "checking" | "ready" | "unsupported") => {
    status.textContent = status.dataset[key] ?? "";
    field.dataset.state = key;
    field.dispatchEvent(new CustomEvent("bot-challenge-state"));
  };
  if (typeof crypto === "undefined" || !crypto.subtle) return say("unsupported");
  const challenge = JSON.parse(challengeText) as Parameters<typeof solve>[0];
  let done = false;
  let held: HTMLElement | true | null = null;
  window.addEventListener(
    "submit",
    (event) => {
      if (done || event.target !== form) return;
      event.preventDefault();
      held = (event as SubmitEvent).submitter ?? true;
      say("checking");
    },
    { capture: true },
  );
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
