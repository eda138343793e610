import { describe, expect, it } from "vitest";
import { findUnrepresentable } from "./text";
import { MAX_JSON_DEPTH, nestsDeeperThan, textNestsDeeperThan } from "./json-depth";

const deepArray = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
const deepObject = (depth: number) => JSON.parse('{"a":'.repeat(depth) + '"x"' + "}".repeat(depth)) as unknown;

describe("the nesting limit of request JSON", () => {
  it("takes values up to the limit and refuses one level more", () => {
    for (const value of ["text", 1, null, [], {}, deepArray(MAX_JSON_DEPTH), deepObject(MAX_JSON_DEPTH), { a: [1, { b: [] }] }]) expect(nestsDeeperThan(value)).toBe(false);
    expect(nestsDeeperThan(deepArray(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(deepObject(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan({ wide: Array.from({ length: 1_000 }, () => ({})), deep: deepArray(MAX_JSON_DEPTH) })).toBe(true);
    expect(nestsDeeperThan(deepArray(3), 2)).toBe(true);
  });

  it("measures JSON text as its parsed value would be measured, brackets in strings aside", () => {
    const texts = [
      "[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH),
      "[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1),
      '{"a":'.repeat(MAX_JSON_DEPTH + 1) + "1" + "}".repeat(MAX_JSON_DEPTH + 1),
      JSON.stringify({ text: "[".repeat(500), escaped: '\\"[[[[', list: [[["x"]]] }),
      JSON.stringify([{ a: "]]]]]]" }, { b: "{{{{{" }]),
    ];
    for (const text of texts) expect(textNestsDeeperThan(text), text.slice(0, 40)).toBe(nestsDeeperThan(JSON.parse(text)));
    expect(textNestsDeeperThan("[".repeat(500_000))).toBe(true);
  });

  it("measures a hostile depth without overflowing the stack", () => {
    expect(nestsDeeperThan(deepArray(100_000))).toBe(true);
    expect(nestsDeeperThan(deepObject(50_000))).toBe(true);
    expect(nestsDeeperThan(deepArray(100_000), 200_000)).toBe(false);
  });

  it("the text check walks any depth without recursion, a visit per value", () => {
    // CPU time, not wall time: the machine may be busy. A recursion copying the path at each level
    // spent 4-6 s on these 100 arrays 3,000 deep.
    const wideAndDeep = JSON.parse(`[${Array.from({ length: 100 }, () => "[".repeat(3_000) + "]".repeat(3_000)).join(",")}]`) as unknown;
    const cpu = process.cpuUsage();
    expect(findUnrepresentable(wideAndDeep)).toBeUndefined();
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(1_000);
    expect(findUnrepresentable(JSON.parse(`${"[".repeat(50_000)}"a\\u0000"${"]".repeat(50_000)}`) as unknown)).toBe(Array(50_000).fill("0").join("."));
  });
});
