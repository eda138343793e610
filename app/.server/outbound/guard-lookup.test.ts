import type { LookupAddress } from "node:dns";
import { beforeEach, describe, expect, it } from "vitest";
import { guardedLookup as guarded, OutboundRefusedError, type Resolver } from "./guard";

/**
 * The guarded `lookup` that webhooks connect through: a name is resolved once, its special-use
 * answers dropped, and the socket connects to an address that was checked, so a resolver that
 * answers differently a moment later (DNS rebinding) cannot slip a private address through.
 * The resolver is scripted here; the rest of the guard's tests (guard.test.ts) use the real one.
 */
const answers: LookupAddress[][] = [];
const scripted: Resolver = (_host, _options, callback) => {
  const next = answers.shift();
  setImmediate(() => (next ? callback(null, next) : callback(Object.assign(new Error("not found"), { code: "ENOTFOUND" }), [])));
};
const guardedLookup = (allowPrivateNetworks: boolean) => guarded(allowPrivateNetworks, scripted);

function resolve(lookup: ReturnType<typeof guardedLookup>, options: Parameters<ReturnType<typeof guardedLookup>>[1]) {
  return new Promise<{ address: string | LookupAddress[]; family?: number | undefined }>((done, fail) =>
    lookup("hooks.example.test", options, (error, address, family) => (error ? fail(error) : done({ address, family }))),
  );
}

const PUBLIC = { address: "93.184.216.34", family: 4 };
const METADATA = { address: "169.254.169.254", family: 4 };
const LOOPBACK6 = { address: "::1", family: 6 };

describe("guardedLookup", () => {
  beforeEach(() => void answers.splice(0));

  it("refuses a name that resolves only to special-use addresses", async () => {
    answers.push([METADATA, LOOPBACK6]);
    await expect(resolve(guardedLookup(false), {})).rejects.toBeInstanceOf(OutboundRefusedError);
  });

  it("hands the socket only an address it checked: the public one of a mixed answer", async () => {
    answers.push([METADATA, PUBLIC]);
    expect(await resolve(guardedLookup(false), {})).toEqual({ address: PUBLIC.address, family: 4 });
    answers.push([LOOPBACK6, PUBLIC]);
    expect(await resolve(guardedLookup(false), { all: true })).toEqual({ address: [PUBLIC], family: undefined });
  });

  it("checks every resolution on its own: a name that turns private after a public answer is refused (DNS rebinding)", async () => {
    const lookup = guardedLookup(false);
    answers.push([PUBLIC], [METADATA]);
    expect((await resolve(lookup, {})).address).toBe(PUBLIC.address);
    await expect(resolve(lookup, {})).rejects.toThrow(/private or special-use/);
  });

  it("lets private answers through only when an operator allows private networks", async () => {
    answers.push([METADATA]);
    expect(await resolve(guardedLookup(true), 4)).toEqual({ address: METADATA.address, family: 4 });
  });

  it("passes a resolver failure on", async () => {
    await expect(resolve(guardedLookup(false), {})).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
