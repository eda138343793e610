import { ResponseBodyError, WWWAuthenticateChallengeError } from "openid-client";
import { describe, expect, it } from "vitest";
import { upstreamErrorCode } from "./federated";

describe("upstreamErrorCode (decision 082)", () => {
  it("reads the OAuth error of a token endpoint's JSON answer and of a WWW-Authenticate challenge", () => {
    expect(upstreamErrorCode(new ResponseBodyError("refused", { cause: { error: "unauthorized_client" }, response: new Response(null, { status: 400 }) }))).toBe("unauthorized_client");
    const challenge = new WWWAuthenticateChallengeError("refused", { cause: [{ scheme: "basic", parameters: { error: "invalid_client", realm: "x" } }], response: new Response(null, { status: 401 }) });
    expect(upstreamErrorCode(challenge)).toBe("invalid_client");
  });

  it("keeps nothing that is not an RFC 6749 error code", () => {
    expect(upstreamErrorCode(new ResponseBodyError("refused", { cause: { error: 'bad"quote' }, response: new Response(null, { status: 400 }) }))).toBeNull();
    expect(upstreamErrorCode(new ResponseBodyError("refused", { cause: { error: "x".repeat(65) }, response: new Response(null, { status: 400 }) }))).toBeNull();
    expect(upstreamErrorCode(new ResponseBodyError("refused", { cause: { error: "line\nbreak" }, response: new Response(null, { status: 400 }) }))).toBeNull();
    expect(upstreamErrorCode(new TypeError("fetch failed"))).toBeNull();
    expect(upstreamErrorCode("unauthorized_client")).toBeNull();
  });
});
