import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The per-user credentials file the `porta` CLI writes and the `cliCredentials` provider reads:
 * one entry per profile. It holds tokens, so it is written with mode 0600, atomically (a temp
 * file in the same folder, then rename), so a reader never sees half a file.
 */
export interface StoredCredentials {
  /** Porta's base URL (where /api/admin lives). */
  server: string;
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
  accessToken: string;
  refreshToken?: string | undefined;
  idToken?: string | undefined;
  /** Epoch milliseconds at which the access token expires. */
  expiresAt: number;
  email?: string | undefined;
}

export interface CredentialsFile {
  version: 1;
  profiles: Record<string, StoredCredentials>;
}

export async function readCredentialsFile(file: string): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, profiles: {} };
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<CredentialsFile>;
  return { version: 1, profiles: parsed.profiles ?? {} };
}

export async function writeCredentialsFile(file: string, content: CredentialsFile): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(temp, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    // The umask cannot widen 0600, but an existing ACL or odd umask could narrow it oddly: set it.
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Stores (or with `undefined` removes) one profile; the file is deleted when no profile is left. */
export async function updateProfile(file: string, profile: string, credentials: StoredCredentials | undefined): Promise<void> {
  const content = await readCredentialsFile(file);
  if (credentials) content.profiles[profile] = credentials;
  else delete content.profiles[profile];
  if (Object.keys(content.profiles).length === 0) await rm(file, { force: true });
  else await writeCredentialsFile(file, content);
}
