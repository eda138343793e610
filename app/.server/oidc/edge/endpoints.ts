/**
 * The paths of an organization's protocol endpoints under its issuer, and the full URLs an app
 * developer copies from the console. The provider's configuration and the console read the same
 * table, so the console can never show an address the provider does not serve.
 */
export const PROVIDER_ROUTES = {
  authorization: "/auth/authorize",
  token: "/auth/token",
  jwks: "/.well-known/jwks",
  userinfo: "/me",
  introspection: "/token/introspection",
  revocation: "/token/revocation",
  end_session: "/session/end",
  pushed_authorization_request: "/auth/par",
  // RFC 8628 (decision 049): the device asks here; the person enters the code at /device.
  device_authorization: "/device/auth",
  code_verification: "/device",
} as const;

export const DISCOVERY_PATH = "/.well-known/openid-configuration";

/** The order the console lists them in: what a relying party's configuration asks for first. */
export const ENDPOINT_NAMES = ["issuer", "discovery", "authorization", "token", "userinfo", "jwks", "end_session", "introspection", "revocation", "pushed_authorization_request"] as const;
export type EndpointName = (typeof ENDPOINT_NAMES)[number];

export function organizationIssuer(baseUrl: string, slug: string): string {
  return `${baseUrl}/${slug}`;
}

export function organizationEndpoints(baseUrl: string, slug: string): Array<{ name: EndpointName; url: string }> {
  const issuer = organizationIssuer(baseUrl, slug);
  const urls: Record<EndpointName, string> = {
    issuer,
    discovery: issuer + DISCOVERY_PATH,
    ...(Object.fromEntries(Object.entries(PROVIDER_ROUTES).map(([name, path]) => [name, issuer + path])) as Record<keyof typeof PROVIDER_ROUTES, string>),
  };
  return ENDPOINT_NAMES.map((name) => ({ name, url: urls[name] }));
}
