import { SamlSettingsSchema, type SamlSettings } from "~/schemas/identity-provider";
// The row type from Prisma, not from providers.ts, which imports the SAML modules that import this one.
import type { IdentityProvider as ProviderRow } from "~/generated/prisma/client";

/** A SAML connection's settings as stored; null for a provider of another kind or a row that does not parse (it cannot sign anyone in). */
export function getSamlSettings(row: Pick<ProviderRow, "kind" | "saml">): SamlSettings | null {
  if (row.kind !== "saml") return null;
  const parsed = SamlSettingsSchema.safeParse(row.saml);
  return parsed.success ? parsed.data : null;
}
