import { readFileSync } from "node:fs";
import type { PortaAdmin } from "@porta/admin-client";
import { flagString, flagValue, type ParsedArgs } from "./args";
import { organizationIdOf } from "./commands";
import { UsageError } from "./config";
import type { Output } from "./output";

/**
 * `porta import-users --org ORG --format FORMAT FILE [--preview] [--claims JSON]`: the Admin
 * API's user import (docs/migration.md) from a file, with a progress bar while it applies. The
 * import commits in batches, each with one `user.imported` audit entry naming its batch and the
 * batch count; the command reads those entries while the apply runs, so the bar shows what has
 * been committed, not a guess.
 */
export const IMPORT_USERS_HELP = `Import users from another system (docs/migration.md):

  porta import-users --org ORG --format keycloak|auth0|csv|json FILE [--preview] [--claims JSON]

--preview reports what would happen and writes nothing. Without it the import applies, showing a
progress bar of the committed batches; running it again changes nothing. --claims maps Auth0
metadata into custom claims: '[{"source":"user_metadata.plan","claimId":"…"}]'.`;

const FORMATS = ["keycloak", "auth0", "csv", "json"] as const;
type Format = (typeof FORMATS)[number];
const POLL_MS = 1000;
/** Applying a large export takes minutes; the client's default timeout is for ordinary calls. */
const APPLY_TIMEOUT_MS = 60 * 60 * 1000;

function bar(done: number, of: number, width = 30): string {
  const filled = of === 0 ? width : Math.round((done / of) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] batch ${done} of ${of}`;
}

/** Draws progress on stderr: one line redrawn on a terminal, a line per change otherwise. */
function progressWriter(stream: NodeJS.WriteStream) {
  let last = "";
  return {
    show(line: string) {
      if (line === last) return;
      last = line;
      stream.write(stream.isTTY ? `\r${line}` : `${line}\n`);
    },
    end() {
      if (stream.isTTY && last) stream.write("\n");
    },
  };
}

export async function runImportUsers(args: ParsedArgs, output: Output, json: boolean, connect: () => Promise<PortaAdmin>): Promise<number> {
  const org = flagString(args, "org");
  const format = flagString(args, "format");
  const file = args.positionals[1] ?? flagString(args, "file");
  if (!org) throw new UsageError("Name the organization: --org ID or --org SLUG.");
  if (!format || !(FORMATS as readonly string[]).includes(format)) throw new UsageError(`Name the format: --format ${FORMATS.join("|")}.`);
  if (!file) throw new UsageError("Name the export file: porta import-users --org ORG --format FORMAT FILE.");
  let data: string;
  try {
    data = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}.`);
  }
  const claimsFlag = flagString(args, "claims");
  const claims = claimsFlag === undefined ? undefined : flagValue(claimsFlag);
  if (claims !== undefined && !Array.isArray(claims)) throw new UsageError("--claims must be a JSON list of {source, claimId}.");
  const client = await connect();
  const orgId = await organizationIdOf(client, org);
  const body = { format: format as Format, data, ...(claims ? { claims: claims as Array<{ source: string; claimId: string }> } : {}) };

  if (args.flags.get("preview") === true) {
    output.result(await client.userImports.preview(orgId, body));
    return 0;
  }

  const started = new Date(Date.now() - 1000).toISOString();
  const progress = progressWriter(process.stderr);
  let finished = false;
  const poll = async () => {
    while (!finished) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (finished) break;
      try {
        const page = await client.audit.list({ organizationId: orgId, eventType: "user.imported", from: started, limit: 100 });
        const batches = page.data.map((entry) => entry.data as { batch?: number; of?: number });
        const of = Math.max(0, ...batches.map((b) => b.of ?? 0));
        if (of > 0 && !json) progress.show(bar(batches.length, of));
      } catch {
        // Progress is a courtesy: a failed read (no audit permission, a blip) never stops the import.
      }
    }
  };
  const watching = poll();
  let report: Awaited<ReturnType<PortaAdmin["userImports"]["apply"]>>;
  try {
    report = await client.userImports.apply(orgId, body, { timeout: APPLY_TIMEOUT_MS });
  } finally {
    finished = true;
    await watching;
  }
  if (!json) {
    progress.show(bar(report.batches ?? 0, report.batches ?? 0));
    progress.end();
  }
  output.result(report);
  if (!json && report.clients.some((c) => c.clientSecret)) output.info("New client secrets are shown only now: put each into its application's configuration with its new client id.");
  return 0;
}
