export const LOGIN_METHODS = ["password", "magic_link"] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];

/** The client's override when it has one, otherwise the organization's default. */
export function effectiveLoginMethods(client: { loginMethods: string[] }, organization: { defaultLoginMethods: string[] }): LoginMethod[] {
  const source = client.loginMethods.length > 0 ? client.loginMethods : organization.defaultLoginMethods;
  return LOGIN_METHODS.filter((m) => source.includes(m));
}
