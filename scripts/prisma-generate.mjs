// Generates the Prisma client offline. Prisma's CLI tries to download its schema engine even
// for `generate`, which needs none; pointing the variable at `true` skips that download.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const truePath = ["/usr/bin/true", "/bin/true"].find((p) => existsSync(p)) ?? "true";
const result = spawnSync("npx", ["--no-install", "prisma", "generate"], {
  stdio: "inherit",
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? truePath, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
});
process.exit(result.status ?? 1);
