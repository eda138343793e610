/**
 * What `npm start` prints once Porta listens: where it runs and where a person goes next. The
 * administrator's credentials (printed just before, on the first start only) are for the console,
 * so the banner says so; on later starts it says where those credentials came from.
 */
export type AdminCredentials = "printed" | "environment" | "earlier";

const WHO: Record<AdminCredentials, string> = {
  printed: "sign in as the administrator printed above",
  environment: "sign in as ADMIN_BOOTSTRAP_EMAIL with ADMIN_BOOTSTRAP_PASSWORD",
  earlier: "sign in as the administrator printed at the first start",
};

export function startBanner(baseUrl: string, credentials: AdminCredentials): string {
  return [
    `  Porta is running at ${baseUrl}  (health: ${baseUrl}/health)`,
    `  Console: ${baseUrl}/console  (${WHO[credentials]})`,
    `  First app: the console's dashboard lists the steps; docs/integrations.md has a snippet for your library`,
    "",
  ].join("\n");
}
