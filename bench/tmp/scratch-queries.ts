import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";

// Starts porta-server, then counts table activity (pg_stat_user_tables) around N requests of a kind.
const dataDir = mkdtempSync(path.join(tmpdir(), "porta-scratch-"));
const port = 40200 + Math.floor(Math.random() * 500);
const child = spawn(process.execPath, ["--import", "tsx", "bench/tmp/scratch-server.ts"], { env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, NODE_ENV: "production", SEED_REFRESH_TOKENS: "60", SEED_REFRESH_FLOWS: "5" }, stdio: ["ignore", "pipe", "inherit"] });
let buf = "";
child.stdout!.on("data", async (c: Buffer) => {
  buf += c.toString();
  if (!buf.includes("\n")) return;
  const info = JSON.parse(buf.split("\n")[0]!) as { issuer: string; clientId: string; secret: string; refreshTokens: string[]; userAccessToken: string };
  buf = "zzz";
  const basic = "Basic " + Buffer.from(`${info.clientId}:${info.secret}`).toString("base64");
  const post = (u: string, body: Record<string, string>) => fetch(u, { method: "POST", headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body) }).then((r) => r.json() as Promise<Record<string, unknown>>);
  const stats = async () => (await fetch(`http://127.0.0.1:${port}/__stats`).then((r) => r.json())) as Record<string, number>;
  const diff = (a: Record<string, number>, b: Record<string, number>, n: number) => Object.fromEntries(Object.keys(b).filter((k) => b[k] !== a[k]).map((k) => [k, (b[k]! - (a[k] ?? 0)) / n]).sort((x, y) => Number(y[1]) - Number(x[1])));
  const N = 50;
  const cc = await post(`${info.issuer}/auth/token`, { grant_type: "client_credentials" });
  let s0 = await stats();
  for (let i = 0; i < N; i++) await post(`${info.issuer}/auth/token`, { grant_type: "client_credentials" });
  let s1 = await stats();
  console.log("per client_credentials grant", diff(s0, s1, N));
  s0 = await stats();
  for (let i = 0; i < N; i++) await post(`${info.issuer}/token/introspection`, { token: String(cc.access_token) });
  s1 = await stats();
  console.log("per introspection (cc token)", diff(s0, s1, N));
  s0 = await stats();
  for (let i = 0; i < N; i++) await post(`${info.issuer}/token/introspection`, { token: info.userAccessToken });
  s1 = await stats();
  console.log("per introspection (user token)", diff(s0, s1, N));
  s0 = await stats();
  for (let i = 0; i < N; i++) { const r = await post(`${info.issuer}/auth/token`, { grant_type: "refresh_token", refresh_token: info.refreshTokens[i]! }); if (!r.access_token) console.log(r); }
  s1 = await stats();
  console.log("per refresh grant", diff(s0, s1, N));
  s0 = await stats();
  for (let i = 0; i < N; i++) await fetch(`${info.issuer}/.well-known/openid-configuration`).then((r) => r.text());
  s1 = await stats();
  console.log("per discovery", diff(s0, s1, N));
  child.kill("SIGTERM");
});
