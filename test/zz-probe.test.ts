import { it } from "vitest";
import { openDatabase } from "~/.server/db/client";
import { startTestPorta } from "./support/porta";
it("probe", async () => {
  let t = Date.now();
  const db = await openDatabase({ databaseUrl: undefined, pgliteDir: "memory://" });
  console.log("pglite-open", Date.now() - t); await db.close(); t = Date.now();
  const porta = await startTestPorta();
  console.log("porta-start", Date.now() - t);
  for (const l of porta.logs.lines) console.log(String(l.time).slice(-6), l.msg);
  await porta.stop();
}, 300_000);
