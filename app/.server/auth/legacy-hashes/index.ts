export { deriveLegacySecret, passwordSecret, readLegacyPassword } from "./derive";
export { parseImportedHash, type ParsedImport } from "./parse";
export { LegacyPasswordSchema, legacyFamily, WEAK_LEGACY_SCHEMES, type LegacyPassword, type LegacyScheme } from "./schema";
