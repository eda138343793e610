import { DISCOVERY_PATH, PROVIDER_ROUTES } from "../oidc/edge/endpoints";

/**
 * The route template a request is counted under. Labels must stay a small fixed set whatever
 * the traffic (a label value per organization, user or id would grow the series without bound),
 * so the organization's slug becomes `{slug}`, ids become `*`, and what is not known is "other".
 */
const TOP_LEVEL = new Map<string, string>([
  ["health", "/health"],
  ["metrics", "/metrics"],
  ["assets", "/assets/*"],
  ["console", "/console/*"],
  ["interaction", "/interaction/*"],
  ["api", "/api/*"],
  ["favicon.ico", "/favicon.ico"],
]);

/** RFC 8414 metadata, answered as the organization's discovery document (http/well-known-first.ts). */
const METADATA = "/.well-known/oauth-authorization-server";

const HEALTH = new Set(["/health", "/health/live", "/health/ready"]);

/** Paths below an organization's issuer: its protocol endpoints, then the pages it serves. */
const ORGANIZATION_PATHS = [...Object.values(PROVIDER_ROUTES), DISCOVERY_PATH, METADATA].sort((a, b) => b.length - a.length);
const ORGANIZATION_PAGES = new Set(["account", "reset-password", "password-changed", "invitation", "federation", "device", "email-change", "magic-link"]);

export function routeLabel(rawUrl: string | undefined): string {
  const path = (rawUrl ?? "/").split("?", 1)[0]!;
  if (path === "/" || path === "") return "/";
  if (path.startsWith(`${METADATA}/`) && !path.slice(METADATA.length + 1).includes("/")) return `${METADATA}/{slug}`;
  if (path === "/api/admin" || path.startsWith("/api/admin/")) return "/api/admin/*";
  if (HEALTH.has(path)) return path;
  const rest = path.slice(1);
  const slash = rest.indexOf("/");
  const first = slash === -1 ? rest : rest.slice(0, slash);
  const known = TOP_LEVEL.get(first);
  if (known) return known;
  if (slash === -1) return "/{slug}";
  const below = rest.slice(slash);
  for (const route of ORGANIZATION_PATHS) {
    if (below === route || below.startsWith(`${route}/`)) return `/{slug}${route}`;
  }
  const page = below.slice(1).split("/", 1)[0]!;
  return ORGANIZATION_PAGES.has(page) ? `/{slug}/${page}${below.length > page.length + 1 ? "/*" : ""}` : "other";
}
