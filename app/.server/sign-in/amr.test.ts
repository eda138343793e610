import { describe, expect, it } from "vitest";
import { amrOf } from "./amr";

/** What the ID token's `amr` says of each way in (RFC 8176; decisions 041 and 046). */
describe("amrOf", () => {
  it("a password alone is pwd; with a code it is multi-factor, a recovery code being knowledge", () => {
    expect(amrOf("password")).toEqual(["pwd"]);
    expect(amrOf("password", "totp")).toEqual(["pwd", "otp", "mfa"]);
    expect(amrOf("password", "email")).toEqual(["pwd", "otp", "mfa"]);
    expect(amrOf("password", "recovery")).toEqual(["pwd", "kba", "mfa"]);
  });

  it("a passkey names how it holds its key, with the user's gesture; as a second factor it adds mfa", () => {
    expect(amrOf("passkey")).toEqual(["hwk", "user"]);
    expect(amrOf("passkey", undefined, "swk")).toEqual(["swk", "user"]);
    expect(amrOf("password", "passkey", "swk")).toEqual(["pwd", "swk", "user", "mfa"]);
    expect(amrOf("password", "passkey")).toEqual(["pwd", "hwk", "user", "mfa"]);
  });

  it("a magic link is email, whatever else is said", () => {
    expect(amrOf("magic_link")).toEqual(["email"]);
    expect(amrOf("magic_link", "totp", "swk", true)).toEqual(["email"]);
  });

  it("a federated sign-in is fed, multi-factor only when the trusted upstream said so or our own factor followed", () => {
    expect(amrOf("federated")).toEqual(["fed"]);
    expect(amrOf("federated", undefined, "hwk", true)).toEqual(["fed", "mfa"]);
    expect(amrOf("federated", "totp")).toEqual(["fed", "otp", "mfa"]);
    expect(amrOf("federated", "recovery")).toEqual(["fed", "kba", "mfa"]);
    expect(amrOf("federated", "passkey", "swk")).toEqual(["fed", "swk", "mfa"]);
  });
});
