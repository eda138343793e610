/**
 * CPU time of one `porta` call (docs/cli.md, "How fast a command starts"): starts a Porta on
 * PostgreSQL (test/support/porta.ts), signs the bootstrap admin in as the CLI does and writes
 * the CLI's credentials file, then runs each command RUNS times as a child process under
 * /usr/bin/time and prints user + system CPU seconds and the peak RSS, with plain Node's own
 * start (and one `fetch`) beside them for scale.
 *
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres node --import tsx bench/cli.ts
 *
 * The CLI runs in its compiled form (packages/cli/dist): run `node scripts/compile.mjs cli` first.
 * CLI_BEFORE=/path/to/other/packages/cli/bin/porta.js measures another build too, its runs
 * interleaved with this one's so that both see the same load.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { obtainAdminTokens } from "../test/support/admin-api";
import { TEST_ADMIN, startTestPorta } from "../test/support/porta";

const RUNS = Number(process.env.RUNS ?? 5);
const PORTA_BIN = fileURLToPath(new URL("../packages/cli/bin/porta.js", import.meta.url));

/** One run; asynchronous, because the server answering it lives in this process. */
async function measure(args: string[], env: NodeJS.ProcessEnv): Promise<{ cpu: number; rssMb: number; status: number | null }> {
  const run = await new Promise<{ stderr: string; status: number | null }>((resolve) => {
    const child = execFile("/usr/bin/time", ["-f", "TIME %U %S %M", process.execPath, ...args], { env, encoding: "utf8" }, (_error, _stdout, stderr) => resolve({ stderr, status: child.exitCode }));
  });
  const line = run.stderr.split("\n").find((l) => l.startsWith("TIME "));
  if (!line) throw new Error(`no timing for ${args.join(" ")}: ${run.stderr}`);
  const [, user, system, rssKb] = line.split(" ");
  return { cpu: Number(user) + Number(system), rssMb: Math.round(Number(rssKb) / 1024), status: run.status };
}

async function main() {
  const porta = await startTestPorta();
  const configDir = mkdtempSync(path.join(tmpdir(), "porta-cli-bench-"));
  try {
    const tokens = await obtainAdminTokens(porta);
    const issuer = `${porta.baseUrl}/${porta.services.config.superAdminSlug}`;
    writeFileSync(
      path.join(configDir, "credentials.json"),
      JSON.stringify({
        version: 1,
        profiles: {
          default: {
            server: porta.url,
            issuer,
            clientId: "porta-admin",
            tokenEndpoint: `${issuer}/auth/token`,
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken,
            expiresAt: Date.now() + 600_000,
            email: TEST_ADMIN.email,
          },
        },
      }),
      { mode: 0o600 },
    );
    const env = { PATH: process.env.PATH ?? "", HOME: configDir, PORTA_CONFIG_DIR: configDir } as unknown as NodeJS.ProcessEnv;
    const bins: Array<[string, string]> = [["", PORTA_BIN], ...(process.env.CLI_BEFORE ? [[" (before)", process.env.CLI_BEFORE] as [string, string]] : [])];
    const slug = porta.services.config.superAdminSlug;
    const commands: Array<[string, string[]]> = [
      ["porta --help", ["--help"]],
      ["porta orgs create --help", ["orgs", "create", "--help"]],
      ["porta whoami (2 requests)", ["whoami"]],
      ["porta orgs list --json (1 request)", ["orgs", "list", "--json"]],
      [`porta users list --org <id> (1 request)`, ["users", "list", "--org", (await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { slug } })).id]],
      [`porta users list --org <slug> (2 requests)`, ["users", "list", "--org", slug]],
    ];
    const rows: Array<Array<[string, string[]]>> = [
      [["node -e 0 (Node alone)", ["-e", "0"]]],
      [["node: one fetch", ["--input-type=module", "-e", `await fetch(${JSON.stringify(`${porta.url}/health`)})`]]],
      ...commands.map(([label, args]) => bins.map(([suffix, bin]) => [`${label}${suffix}`, [bin, ...args]] as [string, string[]])),
    ];
    process.stdout.write(`load average before: ${loadavg().map((l) => l.toFixed(1)).join(" ")}\n`);
    process.stdout.write("| command | CPU-s (user + system), " + RUNS + " runs | max RSS (MB) |\n|---|---:|---:|\n");
    for (const variants of rows) {
      const results = variants.map(() => [] as Array<Awaited<ReturnType<typeof measure>>>);
      for (let i = 0; i < RUNS; i++) for (const [v, [, args]] of variants.entries()) results[v]!.push(await measure(args, env));
      for (const [v, [label]] of variants.entries()) {
        const runs = results[v]!;
        const failed = runs.find((r) => r.status !== 0);
        const cpus = runs.map((r) => r.cpu).sort((a, b) => a - b);
        process.stdout.write(
          `| ${label} | ${cpus[0]!.toFixed(2)}–${cpus.at(-1)!.toFixed(2)} (median ${cpus[Math.floor(cpus.length / 2)]!.toFixed(2)})${failed ? ` exit ${failed.status}` : ""} | ${Math.max(...runs.map((r) => r.rssMb))} |\n`,
        );
      }
    }
    process.stdout.write(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(" ")}\n`);
  } finally {
    rmSync(configDir, { recursive: true, force: true });
    await porta.stop();
  }
}

await main();
