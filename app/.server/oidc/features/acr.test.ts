import { describe, expect, it } from "vitest";
import { ACR, stepUpRequested } from "./acr";

describe("stepUpRequested", () => {
  it("is true when two factors are the only Porta level the request accepts", () => {
    expect(stepUpRequested({ acr_values: ACR.twoFactors })).toBe(true);
    expect(stepUpRequested({ acr_values: `urn:other:gold ${ACR.twoFactors}` })).toBe(true);
  });

  it("is false when one factor is acceptable, or it names nothing Porta issues", () => {
    expect(stepUpRequested({ acr_values: `${ACR.twoFactors} ${ACR.oneFactor}` })).toBe(false);
    expect(stepUpRequested({ acr_values: "urn:other:gold" })).toBe(false);
    expect(stepUpRequested({ acr_values: ["x"] })).toBe(false);
    expect(stepUpRequested({})).toBe(false);
    expect(stepUpRequested(undefined)).toBe(false);
  });
});
