import { text } from "./forms";

/**
 * The application and module forms as the Admin API's bodies, in the browser and on the server
 * alike. An emptied description is sent as null (it clears the stored one).
 */
const description = (form: FormData, name: string) => {
  const value = text(form, name)?.trim();
  return value ? value : null;
};

export function appUpdateInput(form: FormData) {
  return { name: text(form, "name") ?? "", description: description(form, "description") };
}

export function moduleInput(form: FormData) {
  return { name: text(form, "name") ?? "", description: description(form, "description") };
}

export type AppFormValues = ReturnType<typeof appUpdateInput>;
