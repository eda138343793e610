import { AppError, conflict, notFound, validation } from "../errors";

/**
 * Database errors a request can cause (a duplicate, a row deleted meanwhile), in the service
 * error family; anything else is not the caller's fault and stays unknown (a 500).
 */
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

/** An AppError as it is; unique violations become 409, missing rows 404; anything else stays unknown (500). */
export function toAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  if (!isPrismaKnownError(error)) return null;
  if (error.code === "P2002") {
    const field = uniqueFields(error).map((f) => f.replace(/"/g, "")).filter((f) => f !== "organizationId" && f !== "applicationId")[0] ?? "id";
    return conflict("duplicate", `A resource with this ${field} already exists.`, [{ field, message: "already taken" }]);
  }
  if (error.code === "P2025") return notFound();
  if (error.code === "P2003") return validation([{ field: "id", message: "refers to a resource that does not exist" }]);
  return null;
}
