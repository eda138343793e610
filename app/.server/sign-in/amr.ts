import type { LoginMethod } from "~/schemas/login-methods";

/** The second factor that completed a sign-in (after a password or an untrusted upstream). */
export type SecondFactorUsed = "totp" | "email" | "recovery" | "passkey";

/** Authentication methods references (RFC 8176) of a sign-in, as the ID token carries them. */
export function amrOf(method: LoginMethod, secondFactor?: SecondFactorUsed, passkey: "hwk" | "swk" = "hwk", upstreamMfa = false): string[] {
  if (method === "magic_link") return ["email"];
  // Federated (the value Microsoft and others use; RFC 8176 has none): "mfa" when the upstream's sign-in was multi-factor
  // and the provider is trusted for it, or when the organization's own second factor followed.
  if (method === "federated") {
    if (secondFactor) return ["fed", secondFactor === "passkey" ? passkey : secondFactor === "recovery" ? "kba" : "otp", "mfa"];
    return upstreamMfa ? ["fed", "mfa"] : ["fed"];
  }
  // A passkey with user verification: possession of the key and a user gesture (PIN or biometric) on the device.
  if (method === "passkey") return [passkey, "user"];
  if (!secondFactor) return ["pwd"];
  if (secondFactor === "passkey") return ["pwd", passkey, "user", "mfa"];
  return ["pwd", secondFactor === "recovery" ? "kba" : "otp", "mfa"];
}
