import { AppError, conflict, notFound, unavailable, validation } from "../errors";

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

/** What the driver adapter, node-postgres and the network say when the database cannot answer. */
const UNREACHABLE_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "DatabaseShutdown"]);
const UNREACHABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const UNREACHABLE_NODE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// SQLSTATE: connection exceptions (08xxx), the server shutting down or starting (57P01-57P03), too many connections.
const UNREACHABLE_SQLSTATE = /^(08\w{3}|57P0[123]|53300)$/;
const UNREACHABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Can't reach database server|Client has encountered a connection error/i;
/**
 * Prisma gave up waiting for a write's transaction to start (P2028 with this text; context.ts's
 * maxWait): no connection came free, or its BEGIN was not answered in time. The database is too
 * busy to answer, which a client treats like its absence: retry later. Other P2028 errors (a
 * transaction used after it closed or expired) are defects and stay unknown.
 */
const BUSY_MESSAGE = /Unable to start a transaction in the given time/;

/**
 * Whether an error means the database did not answer (down, restarting, unreachable, out of
 * connections, too busy to start a transaction) rather than that the request was wrong: such a failure is a 503 with
 * Retry-After, never an authentication failure or a 500. Walks the causes the layers wrap.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== "object" || error === null || depth > 6) return false;
  const e = error as { name?: unknown; code?: unknown; kind?: unknown; originalCode?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
  if (e.name === "DatabaseUnavailableError") return true;
  if (typeof e.kind === "string" && UNREACHABLE_KINDS.has(e.kind)) return true;
  if (typeof e.code === "string" && (UNREACHABLE_PRISMA_CODES.has(e.code) || UNREACHABLE_NODE_CODES.has(e.code) || UNREACHABLE_SQLSTATE.test(e.code))) return true;
  if (typeof e.originalCode === "string" && UNREACHABLE_SQLSTATE.test(e.originalCode)) return true;
  if (typeof e.message === "string" && (UNREACHABLE_MESSAGE.test(e.message) || BUSY_MESSAGE.test(e.message))) return true;
  return isDatabaseUnavailable(e.meta?.driverAdapterError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}

/** An AppError as it is; an unreachable database is 503, unique violations 409, missing rows 404; anything else stays unknown (500). */
export function toAppError(error: unknown): AppError | null {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return unavailable();
  if (!isPrismaKnownError(error)) return null;
  if (error.code === "P2002") {
    const field = uniqueFields(error).map((f) => f.replace(/"/g, "")).filter((f) => f !== "organizationId" && f !== "applicationId")[0] ?? "id";
    return conflict("duplicate", `A resource with this ${field} already exists.`, [{ field, message: "already taken" }]);
  }
  if (error.code === "P2025") return notFound();
  if (error.code === "P2003") return validation([{ field: "id", message: "refers to a resource that does not exist" }]);
  return null;
}
