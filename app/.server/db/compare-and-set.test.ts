import { describe, expect, it } from "vitest";
import { AppError, notFound } from "../errors";
import { assertVersion, compareAndSet, versionGuard } from "./compare-and-set";

describe("versionGuard", () => {
  it("names If-Match's version first, then the version read, else nothing", () => {
    expect(versionGuard({ ifMatch: 3, read: 5 })).toEqual({ version: 3 });
    expect(versionGuard({ ifMatch: undefined, read: 5 })).toEqual({ version: 5 });
    expect(versionGuard({ ifMatch: undefined })).toEqual({});
  });
});

describe("compareAndSet", () => {
  it("passes the guard to the write and succeeds when one row was written", async () => {
    const seen: { version?: number }[] = [];
    await compareAndSet({ ifMatch: 7 }, async (guard) => {
      seen.push(guard);
      return { count: 1 };
    });
    expect(seen).toEqual([{ version: 7 }]);
  });

  it("fails with 409 etag_mismatch when no row was written", async () => {
    const error = await compareAndSet({ ifMatch: 2, read: 4 }, async () => ({ count: 0 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 409, code: "etag_mismatch", message: "The resource changed since you read it. Read it again and retry." });
  });

  it("fails with what the caller says a miss means", async () => {
    const error = await compareAndSet({ ifMatch: undefined }, async () => ({ count: 0 }), async () => notFound("user")).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("assertVersion", () => {
  it("accepts no If-Match or the current version and refuses another with 409", () => {
    expect(() => assertVersion(undefined, 4)).not.toThrow();
    expect(() => assertVersion(4, 4)).not.toThrow();
    expect(() => assertVersion(3, 4)).toThrow(expect.objectContaining({ status: 409, code: "etag_mismatch" }));
  });
});
