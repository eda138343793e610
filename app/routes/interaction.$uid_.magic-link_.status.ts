import type { LoaderFunctionArgs } from "@remix-run/node";
import { confirmedElsewhere } from "~/.server/sign-in/flow";
import { closedGateJson, passGate } from "~/.server/sign-in/door";
import { NO_STORE } from "~/.server/sign-in/page";

/**
 * GET /interaction/:uid/magic-link/status: `{ confirmed }` for the asking page's script (decision
 * 033). Behind the same gate as the page: another browser learns nothing, not even whether the
 * interaction exists (400, as every interaction route answers it).
 */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "magic_link", endpoint: "GET /interaction/:uid/magic-link/status" });
  if (!gate.open) return closedGateJson(gate);
  return Response.json({ confirmed: await confirmedElsewhere(gate.ctx, gate.uid) }, { headers: NO_STORE });
}
