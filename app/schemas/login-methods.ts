/**
 * The primary login methods, defined once: the Admin API's schemas, the login page, the gate of
 * every interaction route, statistics and the console read this list, and the SQL CHECK
 * constraints on Organization.defaultLoginMethods and Client.loginMethods must equal it
 * (test/architecture.test.ts compares them).
 */
export const LOGIN_METHODS = ["password", "magic_link", "passkey", "federated"] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];

/** The client's override when it has one, otherwise the organization's default. */
export function effectiveLoginMethods(client: { loginMethods: string[] }, organization: { defaultLoginMethods: string[] }): LoginMethod[] {
  const source = client.loginMethods.length > 0 ? client.loginMethods : organization.defaultLoginMethods;
  return LOGIN_METHODS.filter((m) => source.includes(m));
}
