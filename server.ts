/**
 * Porta from source: `npm run dev` and the tests run this through tsx. `npm start` runs the same
 * two steps compiled (scripts/start.mjs, dist/server/main.js); see app/.server/main.ts.
 */
import { fail, preflight, serve } from "./app/.server/main";

preflight()
  .then(serve)
  .catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
