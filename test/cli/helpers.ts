import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TestBrowser, csrfOf } from "../support/browser";
import { TEST_ADMIN, type TestPorta } from "../support/porta";

/** Runs the real `porta` bin as a child process, as a person or a script would. */
export const PORTA_BIN = fileURLToPath(new URL("../../packages/cli/bin/porta.js", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  /** Resolves with the first stderr line matching. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  write(text: string): void;
  done: Promise<CliRun>;
}

export function startPorta(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [PORTA_BIN, ...args], {
    // Only what the CLI needs: nothing of the test runner's environment (no PORTA_TOKEN, no real HOME).
    env: { PATH: process.env.PATH ?? "", HOME: env.PORTA_CONFIG_DIR ?? "/nonexistent", PORTA_NO_BROWSER: "1", ...env } as unknown as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    for (const w of [...waiters]) {
      const match = stderr.match(w.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(match);
      }
    }
  });
  const done = new Promise<CliRun>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return {
    waitFor(pattern, timeoutMs = 20_000) {
      const match = stderr.match(pattern);
      if (match) return Promise.resolve(match);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`porta printed no ${pattern} within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
        void done.then(() => reject(new Error(`porta exited before printing ${pattern}; stderr: ${stderr}`)));
      });
    },
    write: (text) => child.stdin.write(text),
    done,
  };
}

export async function runPorta(args: string[], env: Record<string, string>): Promise<CliRun> {
  const proc = startPorta(args, env);
  return proc.done;
}

/** Signs in on the real login pages at the URL `porta login` printed; returns where the browser was sent. */
export async function signInAt(loginUrl: string, stopAt: string, credentials = TEST_ADMIN): Promise<string> {
  const browser = new TestBrowser();
  const authorize = await browser.get(loginUrl);
  if (authorize.status !== 303) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  const interactionUrl = new URL(authorize.headers.get("location")!, loginUrl).href;
  const page = await browser.get(interactionUrl);
  const posted = await browser.post(interactionUrl, { csrf: csrfOf(await page.text()), email: credentials.email, password: credentials.password });
  const { url } = await browser.follow(posted, interactionUrl, (u) => u.startsWith(stopAt));
  if (!url.startsWith(stopAt)) throw new Error(`the login did not reach ${stopAt}: ${url}`);
  return url;
}

/** `porta login --headless` from start to finish: prints the URL, the test signs in and pastes the callback URL. */
export async function headlessLogin(porta: TestPorta, env: Record<string, string>, extraArgs: string[] = []): Promise<CliRun> {
  const proc = startPorta(["login", "--headless", "--server", porta.url, ...extraArgs], env);
  const [, loginUrl] = await proc.waitFor(/LOGIN_URL (\S+)/);
  const redirectUri = new URL(loginUrl!).searchParams.get("redirect_uri")!;
  const callback = await signInAt(loginUrl!, redirectUri);
  await proc.waitFor(/Paste the URL/);
  proc.write(`${callback}\n`);
  return proc.done;
}
