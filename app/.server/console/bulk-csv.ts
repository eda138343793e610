import type * as CsvParseLibrary from "csv-parse/sync";
import { requiredOnFirstUse } from "../lazy";
import { BULK_CSV_COLUMNS } from "~/schemas/bulk";

/**
 * Bulk operations as a CSV file: a header row naming columns, one operation per row. Empty
 * cells are left out, so one file can mix operations; the Admin API validates each item and
 * its errors (operations.N.field) are shown against the file's line (N + 2).
 */

/** Loaded with the first bulk upload, not at every start (decision 056). */
const csvParse = requiredOnFirstUse<typeof CsvParseLibrary>("csv-parse/sync");

export type CsvOperation = Record<string, string | boolean>;

export type CsvParse = { ok: true; operations: CsvOperation[] } | { ok: false; problem: "empty" | "unreadable" | "columns"; detail?: string };

export function parseBulkCsv(text: string): CsvParse {
  let records: Array<Record<string, string>>;
  try {
    records = csvParse().parse(text, { columns: true, skip_empty_lines: true, trim: true, bom: true, max_record_size: 10_000 }) as Array<Record<string, string>>;
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message : undefined };
  }
  if (records.length === 0) return { ok: false, problem: "empty" };
  const unknown = Object.keys(records[0]!).filter((c) => !(BULK_CSV_COLUMNS as readonly string[]).includes(c));
  if (unknown.length > 0 || !("op" in records[0]!)) return { ok: false, problem: "columns", detail: unknown.join(", ") };
  const operations = records.map((row) => {
    const op: CsvOperation = {};
    for (const [column, value] of Object.entries(row)) {
      if (value === "") continue;
      op[column] = column === "emailVerified" && (value === "true" || value === "false") ? value === "true" : value;
    }
    return op;
  });
  return { ok: true, operations };
}

/** The CSV line an `operations.N…` field of the Admin API's answer refers to (line 1 is the header). */
export function csvLineOf(field: string): number | null {
  const match = /^operations\.(\d+)/.exec(field);
  return match ? Number(match[1]) + 2 : null;
}
