import { PAGE_SOLVER_SCRIPT } from "~/components/bot-challenge-page";

/**
 * The proof-of-work solver of the provider's plain-HTML pages (decision 091): a same-origin
 * static script, so that those pages' Content-Security-Policy needs no nonce or hash for it.
 * The same for every organization and request; it changes only with a release.
 */
export function loader() {
  return new Response(PAGE_SOLVER_SCRIPT, {
    headers: { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600" },
  });
}
