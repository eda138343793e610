import { SamlSettingsSchema, type SamlSettings } from "~/schemas/identity-provider";
import type { ProviderRow } from "./providers";

/** A SAML connection's settings as stored; null for a provider of another kind or a row that does not parse (it cannot sign anyone in). */
export function getSamlSettings(row: Pick<ProviderRow, "kind" | "saml">): SamlSettings | null {
  if (row.kind !== "saml") return null;
  const parsed = SamlSettingsSchema.safeParse(row.saml);
  return parsed.success ? parsed.data : null;
}
