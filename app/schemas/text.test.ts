import { describe, expect, it } from "vitest";
import { findUnrepresentable, isRepresentableText } from "./text";

describe("the text rule", () => {
  it("accepts ordinary text, emoji (paired surrogates) and non-Latin scripts", () => {
    for (const text of ["Ada", "Jürgen Müller", "日本語", "🙂 smile", ""]) expect(isRepresentableText(text), text).toBe(true);
  });

  it("refuses NUL and unpaired surrogates wherever they are", () => {
    for (const text of ["a\u0000b", "\ud800", "x\ud800y", "\udc00", "a\udc00\ud800b", "🙂".slice(0, 1)]) expect(isRepresentableText(text), JSON.stringify(text)).toBe(false);
  });

  it("names the path of the first bad string in a JSON value, keys included", () => {
    expect(findUnrepresentable({ name: "ok", list: [{ a: "x" }, { b: "bad\u0000" }] })).toBe("list.1.b");
    expect(findUnrepresentable({ ["k\ud800"]: 1 })).toBe("k\ud800");
    expect(findUnrepresentable("\u0000")).toBe("");
    expect(findUnrepresentable({ a: [1, true, null, "fine"] })).toBeUndefined();
  });
});
