import { createHash } from "node:crypto";
import { BULK_MODES, BulkRequestSchema, MAX_BULK_OPERATIONS, type BulkResult } from "~/schemas/bulk";
import type { Collaborators } from "../context";
import { csvLineOf, parseBulkCsv, type CsvOperation } from "./bulk-csv";
import { newSecret } from "./session";

/**
 * A bulk file run in steps, so that the page can show real progress: the file is read and every
 * row checked once (with the Admin API's own request schema), then kept in the store in chunks
 * for the console session that uploaded it. Each chunk is taken (read and deleted in one step),
 * so a chunk runs at most once however often its request is sent. All-or-nothing files are one
 * chunk: one transaction cannot report progress honestly, so that page shows it as one step.
 */
export const BULK_CHUNK_SIZE = 10;
const TTL_SECONDS = 30 * 60;
/** Rows name people (emails, names): they rest in the store encrypted, like console sessions. */
const CHUNK_AAD = "console bulk chunk";

export type BulkMode = (typeof BULK_MODES)[number];
export interface BulkChunk {
  mode: BulkMode;
  /** Index of the chunk's first row in the file's operations. */
  offset: number;
  operations: CsvOperation[];
}
export interface BulkProblem {
  line: number | null;
  field: string;
  message: string;
}

export type BulkUpload =
  | { ok: true; mode: BulkMode; operations: CsvOperation[] }
  | { ok: false; problem: "choose" | "empty" | "unreadable" | "columns" | "tooMany"; detail?: string | undefined };

/** The uploaded file and mode of a bulk form, read and parsed; what is wrong with the file itself. */
export async function readBulkUpload(form: FormData): Promise<BulkUpload> {
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0) return { ok: false, problem: "choose" };
  const parsed = parseBulkCsv(await file.text());
  if (!parsed.ok) return parsed;
  if (parsed.operations.length > MAX_BULK_OPERATIONS) return { ok: false, problem: "tooMany" };
  const mode = BULK_MODES.find((m) => m === form.get("mode")) ?? "all_or_nothing";
  return { ok: true, mode, operations: parsed.operations };
}

/** An Admin API field (`operations.N.email`) as the person's file names it: line and column. */
export function problemOf(field: string, message: string, offset = 0): BulkProblem {
  const line = csvLineOf(field);
  return { line: line === null ? null : line + offset, field: field.replace(/^operations\.\d+\.?/, ""), message };
}

/** Every row's problems against the same schema the Admin API applies, before anything runs. */
export function checkRows(organizationId: string, mode: BulkMode, operations: CsvOperation[]): BulkProblem[] {
  const parsed = BulkRequestSchema.safeParse({ organizationId, mode, operations });
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => problemOf(issue.path.map(String).join("."), issue.message));
}

const chunkKey = (sessionId: string, token: string, index: number) =>
  `console:bulk:${createHash("sha256").update(`${sessionId}:${token}:${index}`).digest("base64url")}`;

export async function stageBulk(services: Pick<Collaborators, "store" | "encrypter">, sessionId: string, mode: BulkMode, operations: CsvOperation[]) {
  const token = newSecret();
  const size = mode === "all_or_nothing" ? operations.length : BULK_CHUNK_SIZE;
  const chunks = Math.ceil(operations.length / size);
  for (let index = 0; index < chunks; index++) {
    const chunk: BulkChunk = { mode, offset: index * size, operations: operations.slice(index * size, (index + 1) * size) };
    await services.store.set(chunkKey(sessionId, token, index), services.encrypter.encrypt(JSON.stringify(chunk), CHUNK_AAD), TTL_SECONDS);
  }
  return { token, chunks, total: operations.length };
}

export async function takeBulkChunk(services: Pick<Collaborators, "store" | "encrypter">, sessionId: string, token: string, index: number): Promise<BulkChunk | null> {
  if (!token || !Number.isSafeInteger(index) || index < 0) return null;
  const raw = await services.store.take(chunkKey(sessionId, token, index));
  return raw ? (JSON.parse(services.encrypter.decrypt(raw, CHUNK_AAD)) as BulkChunk) : null;
}

/** One answer of the bulk resource route to the page's script (console.organizations.$id_.bulk_.run.ts). */
export type BulkStep =
  | { kind: "file"; problem: "choose" | "empty" | "unreadable" | "columns" | "tooMany"; detail?: string | undefined }
  /** `message` null: the rows were checked here, before anything ran (the page says so in its language). */
  | { kind: "refused"; message: string | null; problems: BulkProblem[] }
  | { kind: "staged"; token: string; chunks: number; total: number }
  | { kind: "ran"; result: BulkResult }
  | { kind: "gone" };
