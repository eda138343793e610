import { PortaAuthenticationError } from "../core/errors.js";
import { readCredentialsFile, updateProfile, type StoredCredentials } from "./credentials-file.js";
import type { AuthProvider } from "./provider.js";
import { requestToken } from "./token-endpoint.js";

export interface CliCredentialsOptions {
  /** The credentials file the `porta` CLI wrote (e.g. ~/.config/porta/credentials.json). */
  file: string;
  /** The refresh (token) endpoint; defaults to the one stored with the profile. */
  tokenEndpoint?: string;
  /** The admin client id; defaults to the one stored with the profile. */
  clientId?: string;
  profile?: string;
  /** Refresh this many seconds before the access token expires (default 30). */
  refreshSkewSeconds?: number;
  fetch?: typeof fetch;
}

/**
 * Uses the tokens `porta login` stored. An access token about to expire is refreshed with the
 * refresh token, and the new tokens (Porta rotates refresh tokens) are written back to the file.
 */
export function cliCredentials(options: CliCredentialsOptions): AuthProvider {
  const profile = options.profile ?? "default";
  const skewMs = (options.refreshSkewSeconds ?? 30) * 1000;
  let pending: Promise<string> | undefined;
  let forceRefresh = false;

  async function load(): Promise<StoredCredentials> {
    const stored = (await readCredentialsFile(options.file)).profiles[profile];
    if (!stored) {
      throw new PortaAuthenticationError({ status: 401, code: "not_logged_in", message: `No stored credentials for profile "${profile}". Run \`porta login\`.` });
    }
    return stored;
  }

  async function refresh(stored: StoredCredentials, signal?: AbortSignal): Promise<string> {
    if (!stored.refreshToken) {
      throw new PortaAuthenticationError({ status: 401, code: "login_expired", message: "The stored access token expired and there is no refresh token. Run `porta login`." });
    }
    const clientId = options.clientId ?? stored.clientId;
    const token = await requestToken(
      options.tokenEndpoint ?? stored.tokenEndpoint,
      { grant_type: "refresh_token", refresh_token: stored.refreshToken, client_id: clientId },
      { signal, ...(options.fetch ? { fetch: options.fetch } : {}) },
    );
    const next: StoredCredentials = {
      ...stored,
      accessToken: token.access_token,
      refreshToken: token.refresh_token ?? stored.refreshToken,
      idToken: token.id_token ?? stored.idToken,
      expiresAt: Date.now() + (token.expires_in ?? 300) * 1000,
    };
    await updateProfile(options.file, profile, next);
    return next.accessToken;
  }

  return {
    async getToken(signal) {
      pending ??= (async () => {
        const stored = await load();
        const force = forceRefresh;
        forceRefresh = false;
        if (!force && Date.now() < stored.expiresAt - skewMs) return stored.accessToken;
        return refresh(stored, signal);
      })().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      forceRefresh = true;
      return true;
    },
  };
}
