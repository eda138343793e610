import * as oidc from "openid-client";

/**
 * A minimal browser for HTTP-level tests of the login pages: it keeps cookies (honouring
 * Path), never follows redirects on its own, and can submit the forms a page renders.
 */
export class TestBrowser {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  constructor(readonly headers: Record<string, string> = {}) {}

  cookieHeader(url: string): string {
    const { pathname } = new URL(url);
    return [...this.cookies]
      .filter(([, c]) => pathname === c.path || pathname.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`) || c.path === "/")
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
  }

  /** A cookie's value as this browser holds it. */
  cookie(name: string): string | undefined {
    return this.cookies.get(name)?.value;
  }

  /** Puts a cookie into the jar as a server would have (or as someone editing their cookies would). */
  setCookie(name: string, value: string, path = "/") {
    this.cookies.set(name, { value, path });
  }

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((p) => p.trim());
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/";
      const expired = attributes.some((a) => /^expires=thu, 01 jan 1970/i.test(a)) || attributes.some((a) => /^max-age=0$/i.test(a));
      const key = `${name}`;
      if (expired || value === "") this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(url, { redirect: "manual", headers: { ...this.headers, ...headers, cookie: this.cookieHeader(url) } });
    this.remember(res);
    return res;
  }

  /** A list value is sent as the field repeated, as a group of checkboxes sends it. */
  async post(url: string, form: Record<string, string | readonly string[]>, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { ...this.headers, ...headers, "content-type": "application/x-www-form-urlencoded", cookie: this.cookieHeader(url) },
      body: new URLSearchParams(Object.entries(form).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : value.map((v) => [name, v])))).toString(),
    });
    this.remember(res);
    return res;
  }

  /** Follows redirects (resolving relative Locations) until a non-redirect or a foreign origin. */
  async follow(res: Response, from: string, stopAt?: (url: string) => boolean): Promise<{ res: Response; url: string }> {
    let current = res;
    let url = from;
    for (let i = 0; i < 10 && current.status >= 300 && current.status < 400; i++) {
      url = new URL(current.headers.get("location")!, url).href;
      if (stopAt?.(url)) return { res: current, url };
      current = await this.get(url);
    }
    return { res: current, url };
  }
}

export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error("no csrf field in the page");
  return match[1]!;
}

export interface AuthorizationStart {
  browser: TestBrowser;
  config: oidc.Configuration;
  verifier: string;
  /** Absolute URL of the login page (/interaction/:uid). */
  interactionUrl: string;
  uid: string;
}

/** Starts an authorization-code + PKCE request as a relying party would and lands on the login page. */
export async function startAuthorization(options: {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  scope?: string;
  extra?: Record<string, string>;
  browser?: TestBrowser;
}): Promise<AuthorizationStart> {
  const auth = options.clientSecret ? oidc.ClientSecretBasic(options.clientSecret) : oidc.None();
  const config = await oidc.discovery(new URL(options.issuer), options.clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: options.scope ?? "openid profile email",
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...options.extra,
  });
  const browser = options.browser ?? new TestBrowser();
  const res = await browser.get(url.href);
  if (res.status !== 303) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const interactionUrl = new URL(res.headers.get("location")!, url).href;
  return { browser, config, verifier, interactionUrl, uid: interactionUrl.split("/").pop()! };
}

/**
 * The provider's page that posts itself (a browser's script submits it): its form's action and
 * hidden fields, or null when the page is not one. Ending the old session before a sign-in as
 * someone else is such a page.
 */
export function selfPostingForm(html: string): { action: string; fields: Record<string, string> } | null {
  const form = /<form method="post" action="([^"]+)">/.exec(html);
  if (!form || !html.includes("document.forms[0].submit()")) return null;
  const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]));
  return { action: form[1]!, fields };
}
