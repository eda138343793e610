import type { z } from "zod";
import { validation } from "../../../errors";

/** At most this many field details in one refusal: a wrong file would otherwise list every row. */
const MAX_DETAILS = 20;

/** A source that does not have its documented shape: 422 naming the fields under `data`. */
export function refuseShape(error: z.ZodError, prefix: string) {
  const details = error.issues.slice(0, MAX_DETAILS).flatMap((issue) =>
    // A key the format does not have (a misspelt column) is named itself, as the Admin API names one.
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ field: [prefix, ...issue.path.map(String), key].join("."), message: "is not a known field" }))
      : [{ field: [prefix, ...issue.path.map(String)].join("."), message: issue.message }],
  );
  return validation(details, "The export does not have the documented shape.");
}
