import { describe, expect, it } from "vitest";
import { SvgRefusedError } from "../branding/svg";
import { unavailable } from "../errors";
import { DatabaseUnavailableError } from "./client";
import { toAppError } from "./errors";

/** A unique violation names the field a person must change, whichever database adapter reported it. */
const p2002 = (constraint: Record<string, unknown>) => ({ code: "P2002", meta: { modelName: "Organization", driverAdapterError: { cause: { constraint } } } });

describe("toAppError for unique violations", () => {
  it("takes the fields the PGlite adapter names", () => {
    expect(toAppError(p2002({ fields: ['"slug"'] }))?.details).toEqual([{ field: "slug", message: "already taken" }]);
  });

  it("reads the fields from the index name node-postgres reports", () => {
    expect(toAppError(p2002({ index: "Organization_slug_key" }))?.details).toEqual([{ field: "slug", message: "already taken" }]);
    expect(toAppError(p2002({ index: "User_organizationId_email_key" }))?.details).toEqual([{ field: "email", message: "already taken" }]);
    expect(toAppError(p2002({ index: "CustomClaimDefinition_applicationId_claimName_key" }))?.details).toEqual([{ field: "claimName", message: "already taken" }]);
  });

  it("falls back to id for an index it cannot read", () => {
    const error = toAppError(p2002({ index: "some_custom_index" }));
    expect(error?.status).toBe(409);
    expect(error?.details).toEqual([{ field: "id", message: "already taken" }]);
  });
});

describe("toAppError for the errors that joined AppError", () => {
  it("answers an unavailable database as unavailable() does, keeping the reason as the private detail", () => {
    const error = new DatabaseUnavailableError("cannot connect to PostgreSQL at 127.0.0.1:1/porta: refused");
    const answer = toAppError(error)!;
    const expected = unavailable();
    expect({ status: answer.status, code: answer.code, message: answer.message, headers: answer.headers }).toEqual({
      status: expected.status,
      code: expected.code,
      message: expected.message,
      headers: expected.headers,
    });
    expect(answer.detail).toBe("cannot connect to PostgreSQL at 127.0.0.1:1/porta: refused");
    expect(answer.name).toBe("DatabaseUnavailableError");
  });

  it("passes a refused SVG through as the 422 it is", () => {
    expect(toAppError(new SvgRefusedError("nests deeper than allowed"))).toMatchObject({ status: 422, code: "validation_failed", details: [{ field: "body", message: "nests deeper than allowed" }] });
  });
});
