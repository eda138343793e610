import { list, text } from "./forms";

/** The client edit form as the Admin API's update body, in the browser and on the server alike. */
export const CLIENT_FIELDS = ["name", "redirectUris", "postLogoutRedirectUris", "scope", "grantTypes", "applicationId", "adminApiAccess"] as const;

/** Marks a form that shows the Admin API checkbox (only for the super-admin organization's clients). */
export const ADMIN_API_ACCESS_SHOWN = "adminApiAccessShown";

const lines = (value: string | undefined) => (value ?? "").split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

export function clientUpdateInput(form: FormData) {
  const applicationId = text(form, "applicationId") ?? "";
  return {
    name: text(form, "name") ?? "",
    redirectUris: lines(text(form, "redirectUris")),
    postLogoutRedirectUris: lines(text(form, "postLogoutRedirectUris")),
    scope: text(form, "scope") ?? "",
    grantTypes: list(form, "grantTypes"),
    // "" is the "no application" choice.
    applicationId: applicationId === "" ? null : applicationId,
    // An unticked checkbox sends nothing: without the marker the form had none to send.
    ...(form.has(ADMIN_API_ACCESS_SHOWN) ? { adminApiAccess: form.get("adminApiAccess") === "yes" } : {}),
  };
}

export type ClientFormValues = ReturnType<typeof clientUpdateInput>;
