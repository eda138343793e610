import type { Client } from "~/schemas/client";

/**
 * "Connect your app": for each relying-party library docs/integrations.md covers, the lines that
 * sign people in with this client, its own values filled in. Each snippet carries exactly what
 * Porta's rules ask of that library (ES256 where it assumes RS256, the code flow, PKCE unless the
 * client is exempt, and `prompt=consent` for a refresh token when the client is not first party);
 * the secret stays a placeholder, since the console never has it.
 */
export const LIBRARIES = [
  { id: "openid-client", name: "openid-client (Node.js)" },
  { id: "authjs", name: "Auth.js" },
  { id: "express-openid-connect", name: "express-openid-connect" },
  { id: "oidc-client-ts", name: "oidc-client-ts (browser)" },
  { id: "passport", name: "Passport (openid-client's Strategy)" },
  { id: "mod_auth_openidc", name: "mod_auth_openidc (Apache)" },
  { id: "spring", name: "Spring Security" },
  { id: "aspnet", name: "ASP.NET Core" },
  { id: "authlib", name: "Django / Flask (Authlib)" },
  { id: "go-oidc", name: "Go (coreos/go-oidc)" },
] as const;
export type LibraryId = (typeof LIBRARIES)[number]["id"];

export interface SnippetValues {
  issuer: string;
  client: Pick<Client, "id" | "clientType" | "redirectUris" | "scope" | "grantTypes" | "skipConsent" | "pkce">;
}

interface Facts {
  issuer: string;
  clientId: string;
  secret: string | null;
  redirectUri: string;
  origin: string;
  /** The scopes to ask for: openid, profile and email where the client has them, offline_access where it may refresh. */
  scope: string;
  refresh: boolean;
  /** A refresh token needs prompt=consent (the client is not first party). */
  consentForRefresh: boolean;
  pkce: boolean;
}

function factsOf({ issuer, client }: SnippetValues): Facts {
  const has = (s: string) => client.scope.split(" ").includes(s);
  const refresh = has("offline_access") && client.grantTypes.includes("refresh_token");
  const redirectUri = client.redirectUris[0] ?? "https://app.example.com/callback";
  let origin = "https://app.example.com";
  try {
    origin = new URL(redirectUri).origin;
  } catch {
    // A custom-scheme redirect (a native app) has no web origin; the placeholder stays.
  }
  return {
    issuer,
    clientId: client.id,
    secret: client.clientType === "public" ? null : "CLIENT_SECRET",
    redirectUri,
    origin,
    scope: ["openid", ...["profile", "email"].filter(has), ...(refresh ? ["offline_access"] : [])].join(" "),
    refresh,
    consentForRefresh: refresh && !client.skipConsent,
    pkce: client.clientType === "public" || client.pkce !== "not_required",
  };
}

/** The lines of a snippet; a line that does not apply to this client is `false` or `null`. */
const js = (lines: Array<string | false | null>) => lines.filter((l): l is string => typeof l === "string").join("\n");

const SNIPPETS: Record<LibraryId, (f: Facts) => string> = {
  "openid-client": (f) =>
    js([
      `import * as client from "openid-client";`,
      ``,
      `const config = await client.discovery(new URL("${f.issuer}"), "${f.clientId}"${f.secret ? `, "${f.secret}"` : ""});`,
      `const verifier = client.randomPKCECodeVerifier();`,
      `const url = client.buildAuthorizationUrl(config, {`,
      `  redirect_uri: "${f.redirectUri}",`,
      `  scope: "${f.scope}",`,
      f.consentForRefresh && `  prompt: "consent", // a refresh token for a client that is not first party`,
      `  code_challenge: await client.calculatePKCECodeChallenge(verifier),`,
      `  code_challenge_method: "S256",`,
      `});`,
      `// …the browser returns to the redirect URI:`,
      `const tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: verifier });`,
    ]),
  authjs: (f) =>
    js([
      `// Auth.js (@auth/express, next-auth v5): PKCE and ES256 come from discovery.`,
      `providers: [`,
      `  {`,
      `    id: "porta",`,
      `    name: "Porta",`,
      `    type: "oidc",`,
      `    issuer: "${f.issuer}",`,
      `    clientId: "${f.clientId}",`,
      f.secret ? `    clientSecret: "${f.secret}",` : `    client: { token_endpoint_auth_method: "none" },`,
      `    authorization: { params: { scope: "${f.scope}"${f.consentForRefresh ? `, prompt: "consent"` : ""} } },`,
      `  },`,
      `],`,
      `// Redirect URI to register: ${f.origin}/auth/callback/porta`,
    ]),
  "express-openid-connect": (f) =>
    js([
      `// Its defaults are RS256 and response_type=id_token: both settings below are needed.`,
      `app.use(auth({`,
      `  issuerBaseURL: "${f.issuer}",`,
      `  baseURL: "${f.origin}",`,
      `  clientID: "${f.clientId}",`,
      f.secret && `  clientSecret: "${f.secret}",`,
      `  secret: "a long random string for the session cookie",`,
      `  idpLogout: true, // its /logout also ends the session at Porta`,
      `  idTokenSigningAlg: "ES256",`,
      `  authorizationParams: { response_type: "code", scope: "${f.scope}"${f.consentForRefresh ? `, prompt: "consent"` : ""} },`,
      `}));`,
      `// Redirect URI to register: ${f.origin}/callback`,
    ]),
  "oidc-client-ts": (f) =>
    js([
      `import { UserManager } from "oidc-client-ts";`,
      ``,
      `const users = new UserManager({`,
      `  authority: "${f.issuer}",`,
      `  client_id: "${f.clientId}",`,
      `  redirect_uri: "${f.redirectUri}",`,
      `  scope: "${f.scope}",`,
      f.consentForRefresh && `  extraQueryParams: { prompt: "consent" },`,
      `});`,
      `await users.signinRedirect(); // on the redirect URI's page: await users.signinRedirectCallback()`,
      f.secret && `// oidc-client-ts runs in the browser: use a public client (no secret) for it.`,
    ]),
  passport: (f) =>
    js([
      `import * as client from "openid-client";`,
      `import { Strategy } from "openid-client/passport";`,
      ``,
      `const config = await client.discovery(new URL("${f.issuer}"), "${f.clientId}"${f.secret ? `, "${f.secret}"` : ""});`,
      `passport.use("porta", new Strategy(`,
      `  { config, scope: "${f.scope}", callbackURL: "${f.redirectUri}" },`,
      `  (tokens, verified) => verified(null, tokens.claims()),`,
      `));`,
      `// PKCE is sent by the Strategy. passport-openidconnect cannot send it: set this client's PKCE to "not required".`,
    ]),
  mod_auth_openidc: (f) =>
    js([
      `OIDCProviderMetadataURL ${f.issuer}/.well-known/openid-configuration`,
      `OIDCClientID ${f.clientId}`,
      f.secret && `OIDCClientSecret ${f.secret}`,
      `OIDCRedirectURI ${f.redirectUri}`,
      `OIDCCryptoPassphrase a-long-random-passphrase`,
      `OIDCScope "${f.scope}"`,
      f.pkce && `OIDCPKCEMethod S256`,
      f.consentForRefresh && `OIDCAuthRequestParams prompt=consent`,
    ]),
  spring: (f) =>
    js([
      `# application.yml`,
      `spring.security.oauth2.client:`,
      `  provider.porta.issuer-uri: ${f.issuer}`,
      `  registration.porta:`,
      `    client-id: ${f.clientId}`,
      f.secret && `    client-secret: ${f.secret}`,
      `    scope: ${f.scope.split(" ").join(",")}`,
      `    redirect-uri: ${f.redirectUri}`,
      `// Java: ES256 for the ID token (the decoder assumes RS256)${f.pkce && f.secret ? " and PKCE for a confidential client" : ""}`,
      `@Bean JwtDecoderFactory<ClientRegistration> idTokenDecoderFactory() {`,
      `  OidcIdTokenDecoderFactory factory = new OidcIdTokenDecoderFactory();`,
      `  factory.setJwsAlgorithmResolver(registration -> SignatureAlgorithm.ES256);`,
      `  return factory;`,
      `}`,
      f.pkce && f.secret && `resolver.setAuthorizationRequestCustomizer(OAuth2AuthorizationRequestCustomizers.withPkce());`,
      f.consentForRefresh && `// For a refresh token, add prompt=consent to the authorization request in the same customizer.`,
    ]),
  aspnet: (f) =>
    js([
      `.AddOpenIdConnect(options => {`,
      `  options.Authority = "${f.issuer}";`,
      `  options.ClientId = "${f.clientId}";`,
      f.secret && `  options.ClientSecret = "${f.secret}";`,
      `  options.ResponseType = OpenIdConnectResponseType.Code; // PKCE follows (UsePkce is on by default)`,
      `  options.CallbackPath = "${pathOf(f.redirectUri)}";`,
      ...f.scope
        .split(" ")
        .filter((s) => s !== "openid" && s !== "profile")
        .map((s) => `  options.Scope.Add("${s}");`),
      f.consentForRefresh && `  options.Prompt = "consent";`,
      `});`,
    ]),
  authlib: (f) =>
    js([
      `oauth.register(`,
      `    "porta",`,
      `    server_metadata_url="${f.issuer}/.well-known/openid-configuration",`,
      `    client_id="${f.clientId}",`,
      f.secret && `    client_secret="${f.secret}",`,
      `    client_kwargs={"scope": "${f.scope}"${f.pkce ? `, "code_challenge_method": "S256"` : ""}},`,
      `)`,
      `# redirect: oauth.porta.authorize_redirect(request, "${f.redirectUri}"${f.consentForRefresh ? `, prompt="consent"` : ""})`,
    ]),
  "go-oidc": (f) =>
    js([
      `provider, _ := oidc.NewProvider(ctx, "${f.issuer}")`,
      `conf := oauth2.Config{`,
      `  ClientID: "${f.clientId}",`,
      f.secret && `  ClientSecret: "${f.secret}",`,
      `  Endpoint: provider.Endpoint(),`,
      `  RedirectURL: "${f.redirectUri}",`,
      `  Scopes: []string{${f.scope
        .split(" ")
        .map((s) => `"${s}"`)
        .join(", ")}},`,
      `}`,
      `verifier := oauth2.GenerateVerifier()`,
      `url := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)${f.consentForRefresh ? `, oauth2.SetAuthURLParam("prompt", "consent")` : ""})`,
      `// callback: conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); the verifier takes ES256 from discovery`,
    ]),
};

function pathOf(uri: string): string {
  try {
    return new URL(uri).pathname;
  } catch {
    return "/signin-oidc";
  }
}

export function connectSnippet(library: LibraryId, values: SnippetValues): string {
  return SNIPPETS[library](factsOf(values));
}
