/**
 * One renderer for every command: JSON on stdout with --json (for scripts), otherwise a table for
 * lists and a two-column table for a single entity. Messages for people go to stderr, so
 * stdout stays parseable.
 */
export interface Output {
  info(line: string): void;
  result(value: unknown): void;
}

const PREFERRED = ["id", "slug", "name", "email", "claimName", "key", "kid", "status", "organizationId", "clientType", "eventType", "createdAt"];
const MAX_COLUMNS = 7;
const MAX_CELL = 48;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

export function renderTable(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return "(none)";
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => rows.some((r) => r[k] === null || typeof r[k] !== "object"));
  const columns = [...PREFERRED.filter((k) => keys.includes(k)), ...keys.filter((k) => !PREFERRED.includes(k))].slice(0, MAX_COLUMNS);
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
}

function renderEntity(entity: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(entity).map((k) => k.length));
  return Object.entries(entity)
    .map(([k, v]) => `${k.padEnd(width)}  ${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join("\n");
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function renderHuman(value: unknown): string {
  if (value === undefined) return "Done.";
  if (Array.isArray(value)) return renderTable(value.filter(isRecord));
  if (!isRecord(value)) return String(value);
  if (Array.isArray(value.data)) {
    const table = renderTable(value.data.filter(isRecord));
    const footer =
      typeof value.total === "number"
        ? `\n${value.data.length} of ${value.total}${value.totalIsLowerBound === true ? "+" : ""}${typeof value.cursor === "string" ? ` · next: --cursor ${value.cursor}` : ""}`
        : value.hasMore === true && typeof value.nextCursor === "string"
          ? `\nmore: --after ${value.nextCursor}`
          : "";
    return `${table}${footer}`;
  }
  if ("etag" in value && isRecord(value.data)) return `${renderEntity(value.data)}\n${"etag".padEnd(4)}  ${String(value.etag)}`;
  return renderEntity(value);
}

export function createOutput(json: boolean, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Output {
  return {
    info: (line) => err.write(`${line}\n`),
    result: (value) => out.write(`${json ? JSON.stringify(value ?? null, null, 2) : renderHuman(value)}\n`),
  };
}
