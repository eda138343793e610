import { describe, expect, it } from "vitest";
import { planForSignIn, planFromEnrollment, type SecondFactorEnrollment } from "./plan";

const none: SecondFactorEnrollment = { emailOtpEnabled: false, totpEnrolled: false, recoveryLeft: false, passkey: false };

describe("the second factor a sign-in asks for", () => {
  it("under the optional policy, offers every factor the person turned on: an app and email codes both", () => {
    expect(planFromEnrollment({ ...none, totpEnrolled: true, emailOtpEnabled: true, recoveryLeft: true }, "optional")).toEqual({ methods: ["totp", "email"], enrollTotp: false, recovery: true });
    expect(planFromEnrollment({ ...none, emailOtpEnabled: true }, "optional")).toEqual({ methods: ["email"], enrollTotp: false, recovery: false });
    expect(planFromEnrollment({ ...none, totpEnrolled: true, passkey: true }, "optional")).toEqual({ methods: ["passkey", "totp"], enrollTotp: false, recovery: false });
  });

  it("asks nothing under the optional policy of a person without a factor, not even with a passkey alone", () => {
    expect(planFromEnrollment(none, "optional")).toBeNull();
    expect(planFromEnrollment({ ...none, passkey: true }, "optional")).toBeNull();
  });

  it("follows a required policy whatever else is turned on", () => {
    expect(planFromEnrollment({ ...none, totpEnrolled: true }, "required_email")?.methods).toEqual(["email"]);
    expect(planFromEnrollment(none, "required_totp")).toEqual({ methods: ["totp"], enrollTotp: true, recovery: false });
    expect(planFromEnrollment({ ...none, totpEnrolled: true }, "required_any")?.methods).toEqual(["totp", "email"]);
  });

  it("asks for any factor when the relying party requires two (step-up), even under the optional policy", () => {
    expect(planForSignIn(none, "optional", true)?.methods).toEqual(["email"]);
    expect(planForSignIn(none, "optional", false)).toBeNull();
  });
});
