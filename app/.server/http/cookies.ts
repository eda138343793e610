/**
 * Porta's own cookies (the console's, the device cookies): HttpOnly, SameSite=Lax, and Secure
 * whenever Porta is published on https.
 */
export function cookieHeader(baseUrl: string, name: string, value: string, options: { path: string; maxAge: number }): string {
  const secure = baseUrl.startsWith("https:") ? "; Secure" : "";
  return `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

export function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=") || undefined;
  }
  return undefined;
}
