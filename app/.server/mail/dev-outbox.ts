import { type AppLoadContext } from "@remix-run/node";
import { listOutboxMessages, outboxDir, readOutboxMessage, type OutboxMessage, type OutboxSummary } from "./outbox";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

export function isLoopbackAddress(ip: string | undefined): boolean {
  return ip !== undefined && LOOPBACK.has(ip);
}

/**
 * The dev outbox pages exist only while mail goes to the outbox (no SMTP_HOST) and only for a
 * request from this machine. `req.ip` honours X-Forwarded-For from a loopback proxy only
 * (trust proxy "loopback"), so a remote client behind a local reverse proxy is refused too.
 */
export function isDevOutboxAvailable(context: AppLoadContext): boolean {
  return context.services.mailer.kind === "outbox" && isLoopbackAddress(context.req.ip);
}

function notFound(): Response {
  return new Response("Not Found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } });
}

function requireDevOutbox(context: AppLoadContext): string {
  if (!isDevOutboxAvailable(context)) throw notFound();
  return outboxDir(context.services.config.dataDir);
}

/** GET /dev/outbox: the stored messages, newest first; throws a 404 Response when unavailable. */
export async function requireDevOutboxList(context: AppLoadContext): Promise<{ messages: OutboxSummary[] }> {
  return { messages: await listOutboxMessages(requireDevOutbox(context)) };
}

/** GET /dev/outbox/:id: one message with both parts; throws a 404 Response when unavailable or unknown. */
export async function requireDevOutboxMessage(context: AppLoadContext, id: string | undefined): Promise<OutboxMessage> {
  const dir = requireDevOutbox(context);
  const message = id ? await readOutboxMessage(dir, id) : null;
  if (!message) throw notFound();
  return message;
}
