import { useMatches } from "@remix-run/react";

function faviconOf(data: unknown): string | null {
  if (!data || typeof data !== "object" || !("branding" in data)) return null;
  const branding = (data as { branding: unknown }).branding;
  if (!branding || typeof branding !== "object" || !("faviconUrl" in branding)) return null;
  const url = (branding as { faviconUrl: unknown }).faviconUrl;
  // Only Porta's own asset paths (built by brandingOf), never a value from elsewhere.
  return typeof url === "string" && url.startsWith("/assets/branding/") ? url : null;
}

/** The organization's favicon, when the page shown is one of its branded pages. */
export function BrandFavicon() {
  const url = useMatches()
    .map((match) => faviconOf(match.data))
    .find((value) => value !== null);
  return url ? <link rel="icon" href={url} /> : null;
}
