/**
 * The errors an Admin API operation can end with. Services throw these (or Prisma errors, which
 * `toApiError` maps); the route helper turns them into the one error body of DESIGN.md:
 * `{ "error": { "code", "message", "details"? } }`.
 */
export interface FieldDetail {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const unauthorized = () => new ApiError(401, "unauthorized", "A valid admin access token is required.", undefined, { "WWW-Authenticate": 'Bearer realm="porta-admin"' });
export const forbidden = (permission: string) => new ApiError(403, "forbidden", `This operation needs the permission ${permission}.`);
export const notFound = (what = "resource") => new ApiError(404, "not_found", `The ${what} does not exist.`);
export const conflict = (code: string, message: string, details?: FieldDetail[]) => new ApiError(409, code, message, details);
export const staleEtag = () => new ApiError(409, "etag_mismatch", "The resource changed since you read it. Read it again and retry.");
export const validation = (details: FieldDetail[], message = "The request is not valid.") => new ApiError(422, "validation_failed", message, details);
export const badRequest = (message: string) => new ApiError(400, "bad_request", message);

interface PrismaKnownError {
  code: string;
  meta?: { target?: unknown; modelName?: string; driverAdapterError?: { cause?: { constraint?: { fields?: string[]; index?: string } } } };
}

function isPrismaKnownError(error: unknown): error is PrismaKnownError {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" && /^P\d{4}$/.test((error as { code: string }).code);
}

/**
 * The columns of a unique violation. PGlite's adapter names them; node-postgres names only the
 * index, which follows Prisma's naming `<Model>_<field>_<field>_key` (camelCase fields).
 */
function uniqueFields(error: PrismaKnownError): string[] {
  const constraint = error.meta?.driverAdapterError?.cause?.constraint;
  if (constraint?.fields) return constraint.fields;
  const index = constraint?.index ? /^[A-Za-z0-9]+_([A-Za-z0-9_]+)_key$/.exec(constraint.index) : null;
  if (index) return index[1]!.split("_");
  return Array.isArray(error.meta?.target) ? (error.meta?.target as string[]) : [];
}

/** Unique violations become 409, missing rows 404; anything else stays unknown (500). */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (!isPrismaKnownError(error)) return null;
  if (error.code === "P2002") {
    const field = uniqueFields(error).map((f) => f.replace(/"/g, "")).filter((f) => f !== "organizationId" && f !== "applicationId")[0] ?? "id";
    return conflict("duplicate", `A resource with this ${field} already exists.`, [{ field, message: "already taken" }]);
  }
  if (error.code === "P2025") return notFound();
  if (error.code === "P2003") return validation([{ field: "id", message: "refers to a resource that does not exist" }]);
  return null;
}
