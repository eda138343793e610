import { describe, expect, it } from "vitest";
import type { ProviderRow } from "../federation/providers";
import type { VerifiedAssertion } from "../federation/saml-response";
import type { SamlSettings } from "~/schemas/identity-provider";
import { samlPersonOf } from "./saml-sign-in";

const settings: SamlSettings = {
  ssoUrl: "https://idp.test/sso",
  signingCertificates: ["x"],
  metadataUrl: null,
  metadataRefreshedAt: null,
  nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  allowSha1: false,
  idpInitiatedClientId: null,
  groupRoles: [],
  encryptionCertificate: null,
};
const row = (more: Partial<ProviderRow> = {}) => ({ claimMapping: {}, domains: ["corp.test"], assumeVerifiedEmails: true, ...more }) as ProviderRow;
const assertion = (more: Partial<VerifiedAssertion> = {}): VerifiedAssertion => ({
  assertionId: "_a",
  nameId: "p-1",
  nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  attributes: {},
  authnContextClassRefs: [],
  usableUntil: new Date(),
  ...more,
});

describe("samlPersonOf", () => {
  it("reads the mapped attributes, and takes the email as verified only in the connection's domains when it says so", () => {
    const mapped = row({ claimMapping: { email: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", groups: "memberOf" } });
    const person = samlPersonOf(mapped, settings, assertion({ attributes: { "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress": ["Ada@Corp.test"], memberOf: ["a", "b"], firstName: ["Ada"] } }));
    expect(person).toEqual({ ok: true, person: { subject: "p-1", email: "ada@corp.test", emailVerified: true, givenName: "Ada", familyName: null, mfa: false }, groups: ["a", "b"] });
    expect(samlPersonOf(mapped, settings, assertion({ attributes: { "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress": ["ada@other.test"] } }))).toMatchObject({ person: { emailVerified: false } });
    expect(samlPersonOf(row({ assumeVerifiedEmails: false }), settings, assertion({ attributes: { email: ["ada@corp.test"] } }))).toMatchObject({ person: { emailVerified: false } });
    // Not an address: no email at all.
    expect(samlPersonOf(row(), settings, assertion({ attributes: { email: ["ada@corp.test, eve@corp.test"] } }))).toMatchObject({ person: { email: null } });
  });

  it("takes the NameID as the email when its format is emailAddress", () => {
    const email = { ...settings, nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" as const };
    expect(samlPersonOf(row(), email, assertion({ nameId: "Grace@corp.test", nameIdFormat: email.nameIdFormat }))).toMatchObject({ person: { subject: "Grace@corp.test", email: "grace@corp.test" } });
  });

  it("refuses a transient NameID and a format other than the connection's", () => {
    expect(samlPersonOf(row(), settings, assertion({ nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient" }))).toMatchObject({ ok: false, reason: "wrong_name_id_format" });
    expect(samlPersonOf(row(), settings, assertion({ nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" }))).toMatchObject({ ok: false, reason: "wrong_name_id_format" });
    const unspecified = { ...settings, nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" as const };
    expect(samlPersonOf(row(), unspecified, assertion({ nameIdFormat: null }))).toMatchObject({ ok: true });
  });

  it("counts the multi-factor authentication contexts only", () => {
    for (const context of ["http://schemas.microsoft.com/claims/multipleauthn", "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract", "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken", "https://refeds.org/profile/mfa"]) {
      expect(samlPersonOf(row(), settings, assertion({ authnContextClassRefs: [context] }))).toMatchObject({ person: { mfa: true } });
    }
    expect(samlPersonOf(row(), settings, assertion({ authnContextClassRefs: ["urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"] }))).toMatchObject({ person: { mfa: false } });
  });
});
