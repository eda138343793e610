import { describe, expect, it } from "vitest";
import { fakeLimits, fakeSignInContext } from "../../../../test/support/sign-in-context";
import type { InteractionContext } from "../interaction";
import { ResponseBodyError, WWWAuthenticateChallengeError } from "openid-client";
import { completeFederatedSignIn, federated, interactionOfState, loginPageProviders, startForEmail, upstreamErrorCode } from "./federated";

/**
 * What a federated sign-in decides before it talks to anyone, without a server: a client without
 * the method offers no provider and discovers none; the callback's state is looked up only when it
 * could be one; past the failure limit the answer is refused and audited without being read.
 */
const ic = (methods: string[]) => ({ uid: "uid-1", organization: { id: "org-1", slug: "org" }, client: { id: "client-1" }, methods }) as unknown as InteractionContext;
const meta = { ip: "203.0.113.9", requestId: null };

describe("the federated first factor", () => {
  it("is the login method federated", () => {
    expect(federated).toMatchObject({ kind: "first", method: "federated" });
  });

  it("offers and discovers nothing for a client without the method", async () => {
    const { ctx } = fakeSignInContext({});
    expect(await loginPageProviders(ctx as never, ic(["password"]))).toEqual({ providers: [], discovery: false });
    expect(await startForEmail(ctx as never, ic(["password"]), "ada@example.test", null)).toBeNull();
  });

  it("looks up a callback's state only when it could be one, and only for its own organization", async () => {
    const asked: string[] = [];
    const { ctx } = fakeSignInContext({ store: { get: async (key: string) => (asked.push(key), JSON.stringify({ uid: "uid-1", organizationId: "org-1" })) } });
    expect(await interactionOfState(ctx as never, "org-1", "")).toBeNull();
    expect(await interactionOfState(ctx as never, "org-1", "s".repeat(513))).toBeNull();
    expect(asked).toEqual([]);
    expect(await interactionOfState(ctx as never, "org-1", "state")).toBe("uid-1");
    expect(await interactionOfState(ctx as never, "org-2", "state")).toBeNull();
  });

  it("past the failure limit the answer is refused and audited without being read", async () => {
    const { ctx, recorded } = fakeSignInContext({});
    const limited = { ...ctx, limits: fakeLimits(recorded, { federatedLogin: 300 }) };
    expect(await completeFederatedSignIn(limited as never, ic(["federated"]), { search: new URLSearchParams("state=s&code=c"), meta, language: "en" })).toEqual({
      kind: "rate_limited",
      retryAfterSeconds: 300,
    });
    expect(recorded.transactions[0]?.audits[0]).toMatchObject({ eventType: "auth.login.failure", data: { method: "federated", reason: "rate_limited" } });
  });
});

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
