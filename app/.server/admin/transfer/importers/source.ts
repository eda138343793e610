import { z } from "zod";
import type { ImportedPasswordHash } from "~/schemas/imported-password-hash";
import type { UserImportSkip } from "~/schemas/user-import";

/**
 * What an importer makes of another system's export: the users and roles Porta would create,
 * and the rows it cannot take, each with its reason. Importers only read; the import service
 * (../user-import.ts) decides what exists already and writes.
 */
export interface SourceUser {
  row: number;
  sourceId: string | null;
  /** Trimmed and lower-cased (not yet checked against the email rule). */
  email: string;
  givenName: string | null;
  familyName: string | null;
  emailVerified: boolean;
  active: boolean;
  /** The old password's hash in a form `users.create` takes, or null without one. */
  passwordHash: ImportedPasswordHash | null;
  /** Names of the roles the source gives the user. */
  roles: string[];
  /**
   * The user's TOTP secret (base32 of the key's bytes) when the source has one Porta's TOTP can
   * check (SHA-1, 6 digits, 30-second steps); null without one.
   */
  totpSecret: string | null;
  /** Why the source's one-time-password credential was not carried, when it was not. */
  totpProblem?: string;
  /** The source's free-form data about the user (Auth0's user_metadata and app_metadata), by name. */
  metadata?: Record<string, unknown>;
}

export interface SourceRole {
  name: string;
  description: string | null;
}

/** An application's client in the source (Keycloak's clients), as `clients.create` would take it. */
export interface SourceClient {
  /** The source's own client id. */
  sourceId: string;
  name: string;
  clientType: "public" | "confidential";
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  /** Why it cannot be carried (a built-in, a SAML client, an API without flows), when it cannot. */
  skip?: string;
  /** What was dropped on the way (wildcard redirect URIs Porta does not allow). */
  dropped?: string;
}

export interface ImportSource {
  users: SourceUser[];
  roles: SourceRole[];
  skipped: UserImportSkip[];
  clients?: SourceClient[];
}

// A NUL or another control character is refused: PostgreSQL's text cannot hold a NUL, and the
// others have no place in a name an account page shows.
const NO_CONTROL = /^[^\p{Cc}]*$/u;

/** A text field of a source row: bounded, without control characters. */
export const SourceText = (max: number) => z.string().max(max, `must have at most ${max} characters`).regex(NO_CONTROL, "must not contain control characters");

/** A person's name as the user's representation takes it: trimmed, empty meaning none. */
export function nameOf(value: string | null | undefined): string | null {
  const trimmed = value?.trim() ?? "";
  return trimmed === "" ? null : trimmed.slice(0, 200);
}

/** An address as Porta stores it, or null for a row without one. */
export function emailOf(value: string | null | undefined): string | null {
  const trimmed = value?.trim().toLowerCase() ?? "";
  return trimmed === "" ? null : trimmed;
}
