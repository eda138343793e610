/**
 * Raw Argon2id verifications, the yardstick of the password-login benchmark: in its own process
 * (as Porta runs in its own), with Porta's own parameters and its own verify function, and with
 * `ARGON2_CONCURRENCY` verifications in flight at once, as many as the login benchmark keeps
 * logins in flight. argon2 runs on libuv's thread pool in both processes (UV_THREADPOOL_SIZE is
 * inherited alike), so both get the same threads.
 *
 * Env: ARGON2_CONCURRENCY (8), ARGON2_SECONDS (4). Prints one JSON line:
 * `{ verifications, seconds, perSecond, cpuSeconds, cpuMsPerVerification, params }`.
 */
import { performance } from "node:perf_hooks";
import { DEFAULT_ARGON2_PARAMS, hashPassword, verifyPassword } from "../app/.server/auth/password-hash";

const PASSWORD = "bench password: correct horse battery staple";

async function main() {
  const concurrency = Number(process.env.ARGON2_CONCURRENCY ?? 8);
  const seconds = Number(process.env.ARGON2_SECONDS ?? 4);
  const hash = await hashPassword(PASSWORD);
  // One verification each way before timing: the thread pool is started and the code is warm.
  if (!(await verifyPassword(hash, PASSWORD))) throw new Error("the raw verification failed");

  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let verifications = 0;
  let lastDone = started;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        if (!(await verifyPassword(hash, PASSWORD))) throw new Error("the raw verification failed");
        verifications++;
        lastDone = performance.now();
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const elapsed = (lastDone - started) / 1000;
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  process.stdout.write(
    JSON.stringify({
      verifications,
      seconds: elapsed,
      perSecond: verifications / elapsed,
      cpuSeconds,
      cpuMsPerVerification: (1000 * cpuSeconds) / verifications,
      params: DEFAULT_ARGON2_PARAMS,
    }) + "\n",
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`argon2-raw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
