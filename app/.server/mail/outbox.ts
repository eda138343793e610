import { randomBytes } from "node:crypto";
import { mkdir, readFile, readdir, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The development outbox: without SMTP_HOST every message is written to
 * `$DATA_DIR/outbox/<id>.json` (mode 0600) instead of being sent, and /dev/outbox shows them.
 * Only the newest OUTBOX_LIMIT messages are kept.
 */
export const OUTBOX_LIMIT = 200;

export interface OutboxMessage {
  id: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  createdAt: string;
}

export type OutboxSummary = Pick<OutboxMessage, "id" | "to" | "subject" | "createdAt">;

/** `<ms since epoch, 15 digits>-<sequence, 6 digits>-<random>`: names sort by creation time. */
const ID_PATTERN = /^\d{15}-\d{6}-[0-9a-f]{12}$/;
let sequence = 0;

export function outboxDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), "outbox");
}

export function isOutboxId(value: string): boolean {
  return ID_PATTERN.test(value);
}

function newId(now: Date): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${String(now.getTime()).padStart(15, "0")}-${String(sequence).padStart(6, "0")}-${randomBytes(6).toString("hex")}`;
}

/** Message ids in the folder, newest first. */
async function ids(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith(".json"))
    .map((name) => name.slice(0, -".json".length))
    .filter(isOutboxId)
    .sort()
    .reverse();
}

/** Writes one message atomically (temp file, then rename) and drops all but the newest OUTBOX_LIMIT. */
export async function writeOutboxMessage(dir: string, message: Omit<OutboxMessage, "id" | "createdAt">, now = new Date()): Promise<OutboxMessage> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stored: OutboxMessage = { id: newId(now), ...message, createdAt: now.toISOString() };
  const file = path.join(dir, `${stored.id}.json`);
  const temp = path.join(dir, `.${stored.id}.tmp`);
  await writeFile(temp, JSON.stringify(stored, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  await rename(temp, file);
  await pruneOutbox(dir);
  return stored;
}

export async function pruneOutbox(dir: string, limit = OUTBOX_LIMIT): Promise<void> {
  const stale = (await ids(dir)).slice(limit);
  await Promise.all(
    stale.map((id) =>
      unlink(path.join(dir, `${id}.json`)).catch((error: unknown) => {
        // A concurrent prune may have removed it already.
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }),
    ),
  );
}

async function readMessage(dir: string, id: string): Promise<OutboxMessage | null> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, `${id}.json`), "utf8")) as Partial<OutboxMessage>;
    if (typeof parsed.to !== "string" || typeof parsed.subject !== "string" || typeof parsed.html !== "string" || typeof parsed.text !== "string") return null;
    return { id, to: parsed.to, subject: parsed.subject, html: parsed.html, text: parsed.text, createdAt: String(parsed.createdAt ?? "") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** The newest messages first, without their bodies. */
export async function listOutboxMessages(dir: string): Promise<OutboxSummary[]> {
  const messages = await Promise.all((await ids(dir)).map((id) => readMessage(dir, id)));
  return messages.filter((m): m is OutboxMessage => m !== null).map(({ id, to, subject, createdAt }) => ({ id, to, subject, createdAt }));
}

/** One message, or null for an unknown or malformed id (never a path outside the folder). */
export async function readOutboxMessage(dir: string, id: string): Promise<OutboxMessage | null> {
  return isOutboxId(id) ? readMessage(dir, id) : null;
}
