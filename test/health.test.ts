import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPorta, type TestPorta } from "./support/porta";

describe("GET /health", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("answers 200 ok with the database and cache checks", async () => {
    const res = await fetch(`${porta.url}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ok", checks: { database: "ok", cache: "ok", mail: "ok" } });
  });

  it("answers 503 once the database is gone", async () => {
    await porta.services.db.close();
    const res = await fetch(`${porta.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "unavailable", checks: { database: "unavailable" } });
  });
});
