import { describe, expect, it } from "vitest";
import { etagOf, parseIfMatch, versionOfEtag } from "./etag";

describe("ETags", () => {
  it("reads back the version etagOf wrote, weak or strong", () => {
    expect(versionOfEtag(etagOf(12))).toBe(12);
    expect(versionOfEtag(`W/${etagOf(3)}`)).toBe(3);
    expect(versionOfEtag(null)).toBeUndefined();
    expect(versionOfEtag('"abc"')).toBeUndefined();
  });

  it("takes no If-Match or * as any version and refuses a foreign ETag with 400", () => {
    expect(parseIfMatch(null)).toBeUndefined();
    expect(parseIfMatch(" * ")).toBeUndefined();
    expect(parseIfMatch(' "v4" ')).toBe(4);
    expect(() => parseIfMatch('"abc"')).toThrow(expect.objectContaining({ status: 400, code: "bad_request" }));
  });
});
