/**
 * SCIM's error response (RFC 7644 §3.12): every refusal of the SCIM endpoint has this body,
 * with the HTTP status as a string and, for a 400 or 409, the `scimType` that names why.
 */
export const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
    readonly headers: Record<string, string> = {}
  ) {
    super(detail);
  }

  toBody() {
    return {
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.detail,
    };
  }
}

export const invalidValue = (detail: string) =>
  new ScimError(400, detail, "invalidValue");
export const invalidSyntax = (detail: string) =>
  new ScimError(400, detail, "invalidSyntax");
export const invalidFilter = (detail: string) =>
  new ScimError(400, detail, "invalidFilter");
export const invalidPath = (detail: string) =>
  new ScimError(400, detail, "invalidPath");
export const noTarget = (detail: string) =>
  new ScimError(400, detail, "noTarget");
export const mutability = (detail: string) =>
  new ScimError(400, detail, "mutability");
export const uniqueness = (detail: string) =>
  new ScimError(409, detail, "uniqueness");
export const scimNotFound = (what: "User" | "Group" | "Resource") =>
  new ScimError(404, `${what} not found.`);
