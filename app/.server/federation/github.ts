import { z } from "zod";
import { OutboundRefusedError } from "../outbound/guard";
import { AppError } from "../errors";
import type { OAuthEndpoints } from "~/schemas/identity-provider";

/**
 * GitHub as an upstream (decision 055): OAuth 2.0 with PKCE, no OpenID Connect, so no discovery,
 * no ID token and no nonce. Who signed in is the answer of GET /user (its numeric id is the
 * subject: a login can be renamed and then taken by someone else); the email is the primary
 * address of GET /user/emails, verified only when GitHub says `verified: true` for it. Every
 * request goes through the caller's guarded fetch.
 */

export interface GitHubPerson {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

/**
 * Thrown for an answer that cannot be used, never with a token in it. No one is shown the message
 * (the sign-in says "invalid"): the federated sign-in logs it and reads it for signs of an unreachable upstream.
 */
export class GitHubAnswerError extends AppError {
  constructor(message: string) {
    super(502, "upstream_answer_invalid", message);
    this.name = "GitHubAnswerError";
  }
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function githubAuthorizationUrl(endpoints: OAuthEndpoints, input: { clientId: string; redirectUri: string; scopes: string[]; state: string; codeChallenge: string }): string {
  const url = new URL(endpoints.authorization);
  url.searchParams.set("client_id", input.clientId);
  url.searchParams.set("redirect_uri", input.redirectUri);
  url.searchParams.set("scope", input.scopes.join(" "));
  url.searchParams.set("state", input.state);
  url.searchParams.set("code_challenge", input.codeChallenge);
  url.searchParams.set("code_challenge_method", "S256");
  return url.href;
}

const TokenAnswer = z.object({ access_token: z.string().min(1).max(4096), token_type: z.string().optional() });
const TokenError = z.object({ error: z.string().max(200) });
const UserAnswer = z.object({ id: z.number().int().positive(), login: z.string().max(100), name: z.string().max(500).nullable().optional(), email: z.string().max(320).nullable().optional() });
const EmailsAnswer = z.array(z.object({ email: z.string().max(320), primary: z.boolean(), verified: z.boolean() }).loose()).max(200);

/** Plain http only where the operator lets requests reach private networks (tests, closed networks), as for OpenID issuers. */
function requireHttps(endpoints: OAuthEndpoints, allowInsecure: boolean) {
  for (const href of Object.values(endpoints)) {
    if (new URL(href).protocol !== "https:" && !allowInsecure) throw new OutboundRefusedError(`${href} is not https`);
  }
}

async function json(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new GitHubAnswerError(`the answer (HTTP ${response.status}) is not JSON`);
  }
}

/** The code exchanged (with the PKCE verifier), then the person from the user and emails endpoints. */
export async function githubPerson(
  fetch: Fetch,
  endpoints: OAuthEndpoints,
  input: { clientId: string; clientSecret: string | null; code: string; redirectUri: string; verifier: string; allowInsecure: boolean },
): Promise<GitHubPerson> {
  requireHttps(endpoints, input.allowInsecure);
  const form = new URLSearchParams({ client_id: input.clientId, code: input.code, redirect_uri: input.redirectUri, code_verifier: input.verifier });
  if (input.clientSecret) form.set("client_secret", input.clientSecret);
  const tokenResponse = await fetch(endpoints.token, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  const tokenBody = await json(tokenResponse);
  // GitHub answers a refused code with 200 and an `error` field.
  const refused = TokenError.safeParse(tokenBody);
  if (refused.success) throw new GitHubAnswerError(`the token endpoint refused the code: ${refused.data.error}`);
  const token = TokenAnswer.safeParse(tokenBody);
  if (!tokenResponse.ok || !token.success) throw new GitHubAnswerError(`the token endpoint answered HTTP ${tokenResponse.status} without an access token`);
  if (token.data.token_type && token.data.token_type.toLowerCase() !== "bearer") throw new GitHubAnswerError("the access token is not a bearer token");

  const headers = { accept: "application/vnd.github+json", authorization: `Bearer ${token.data.access_token}`, "user-agent": "Porta", "x-github-api-version": "2022-11-28" };
  const [userResponse, emailsResponse] = await Promise.all([fetch(endpoints.user, { headers }), fetch(endpoints.emails, { headers })]);
  const user = UserAnswer.safeParse(await json(userResponse));
  if (!userResponse.ok || !user.success) throw new GitHubAnswerError(`the user endpoint answered HTTP ${userResponse.status} without a user`);
  // Without the user:email scope the list is refused: the address is then unknown, not verified.
  const emails = emailsResponse.ok ? EmailsAnswer.safeParse(await json(emailsResponse)) : null;
  if (!emailsResponse.ok) await emailsResponse.body?.cancel();
  const primary = emails?.success ? emails.data.find((e) => e.primary) : undefined;
  const email = (primary?.email ?? user.data.email ?? "").trim().toLowerCase() || null;
  return {
    subject: String(user.data.id),
    email,
    // Only the primary address, and only when GitHub says it is verified.
    emailVerified: primary !== undefined && primary.verified === true,
    name: user.data.name?.trim() || null,
  };
}
