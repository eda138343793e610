import type { z } from "zod";

/**
 * The handler a form's `intent` names in a table of intents, or undefined: only the table's own
 * entries count, so a posted "constructor" or "toString" is an unknown action, not Object's.
 */
export function intentIn<T>(table: Record<string, T>, intent: string): T | undefined {
  return Object.hasOwn(table, intent) ? table[intent] : undefined;
}

/** Form fields to the Admin API's JSON body shape, shared by the browser and the server. */
export function text(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === "string" ? value : undefined;
}

export function list(form: FormData, name: string): string[] {
  return form.getAll(name).filter((v): v is string => typeof v === "string");
}

/** zod issues keyed by top-level field, as the Admin API's 422 details name them. */
export function zodFieldErrors(error: z.ZodError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of error.issues) {
    const field = issue.code === "unrecognized_keys" ? "form" : String(issue.path[0] ?? "form");
    errors[field] ??= issue.message;
  }
  return errors;
}

/**
 * Field errors from an Admin API answer, keyed by top-level field. An error about a field the
 * form does not show goes to the form's own message, so that none is lost.
 */
/**
 * The Admin API's field details as the form's errors, each beside its field. `aliases` names the
 * form field of a nested API path (`saml.groupRoles` → the `groupRoles` text area); what lies
 * below that path stays in the message, counted from 1 ("2.roles.1: …", the second line's first role). Details of
 * fields the form does not show go above it with their full path.
 */
export function detailErrors(
  details: ReadonlyArray<{ field: string; message: string }> | undefined,
  shown: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const d of details ?? []) {
    const prefix = Object.keys(aliases).find((path) => d.field === path || d.field.startsWith(`${path}.`));
    if (prefix) {
      // Positions count from 1, as people count lines and items.
      const rest = d.field
        .slice(prefix.length + 1)
        .split(".")
        .filter(Boolean)
        .map((part) => (/^\d+$/.test(part) ? String(Number(part) + 1) : part))
        .join(".");
      errors[aliases[prefix]!] ??= rest ? `${rest}: ${d.message}` : d.message;
      continue;
    }
    const field = d.field.split(".")[0]!;
    if (shown.includes(field)) errors[field] ??= d.message;
    else errors.form = [errors.form, `${d.field}: ${d.message}`].filter(Boolean).join("; ");
  }
  return errors;
}

export const ORGANIZATION_FIELDS = ["name", "slug", "defaultLoginMethods", "twoFactorPolicy", "defaultLocale", "oauth21", "botChallenge", "botChallengeCost"] as const;

/** A whole number typed into a text field; anything else is passed on as typed, for the schema to refuse beside the field. */
export function wholeNumber(form: FormData, name: string): number | string | undefined {
  const value = text(form, name)?.trim();
  if (value === undefined || value === "") return undefined;
  return /^\d{1,9}$/.test(value) ? Number(value) : value;
}

export function organizationFields(form: FormData) {
  return {
    name: text(form, "name"),
    defaultLoginMethods: list(form, "defaultLoginMethods"),
    twoFactorPolicy: text(form, "twoFactorPolicy"),
    defaultLocale: text(form, "defaultLocale"),
    // A checkbox: present when ticked.
    oauth21: form.get("oauth21") === "on",
    botChallenge: text(form, "botChallenge"),
    botChallengeCost: wholeNumber(form, "botChallengeCost"),
  };
}
