import { text } from "./forms";

/**
 * Form fields of the user pages to the Admin API's body shapes, shared by the browser (client
 * validation) and the server (the same zod schema parses both).
 */

/** Create-form fields carry a prefix: the users page also holds the invitation form with the same names. */
export const CREATE_PREFIX = "new";
export const CREATE_FIELDS = ["email", "givenName", "familyName", "password", "locale", "emailVerified"] as const;
export const createFieldName = (field: string) => `${CREATE_PREFIX}${field[0]!.toUpperCase()}${field.slice(1)}`;

export function createUserInput(form: FormData) {
  const optional = (field: string) => text(form, createFieldName(field))?.trim() || undefined;
  // A password is taken as typed: spaces may be part of it.
  const password = text(form, createFieldName("password"));
  return {
    email: text(form, createFieldName("email")) ?? "",
    givenName: optional("givenName"),
    familyName: optional("familyName"),
    password: password ? password : undefined,
    locale: optional("locale"),
    emailVerified: form.get(createFieldName("emailVerified")) === "on" ? true : undefined,
  };
}

/** Errors keyed by API field, renamed to the create form's field names. */
export function createFormErrors(errors: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(errors).map(([k, v]) => [k === "form" ? "createForm" : createFieldName(k), v]));
}

export const UPDATE_FIELDS = ["email", "givenName", "familyName", "locale"] as const;

/** An emptied name or locale clears it (null), as the update schema allows. */
export function updateUserInput(form: FormData) {
  const nullable = (name: string) => text(form, name)?.trim() || null;
  return {
    email: text(form, "email") ?? "",
    givenName: nullable("givenName"),
    familyName: nullable("familyName"),
    locale: nullable("locale"),
  };
}

/**
 * Only what differs from the saved user goes into the update, so the history names real changes.
 * An empty result means the form changed nothing.
 */
export function changedFields<T extends Record<string, unknown>>(input: T, saved: Record<string, unknown>): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([k, v]) => v !== undefined && v !== (saved[k] ?? null))) as Partial<T>;
}

export const ROLE_FIELDS = ["name", "description"] as const;

export function roleUpdateInput(form: FormData) {
  return { name: text(form, "name") ?? "", description: text(form, "description")?.trim() || null };
}

/**
 * A 409 other than a stale version (a taken email or name): its message is the helpful text, so
 * it goes beside each field the Admin API names, or to the form when it names none shown.
 */
export function conflictErrors(error: { message: string; details?: ReadonlyArray<{ field: string }> | undefined }, shown: readonly string[]): Record<string, string> {
  const fields = (error.details ?? []).map((d) => d.field.split(".")[0]!).filter((f) => shown.includes(f));
  return fields.length > 0 ? Object.fromEntries(fields.map((f) => [f, error.message])) : { form: error.message };
}

/** The version a form was loaded with; NaN when it carries none, which matches no saved version. */
export function formVersion(form: FormData): number {
  const raw = form.get("version");
  return typeof raw === "string" && /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
}
