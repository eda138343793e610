import { describe, expect, it } from "vitest";
import { sniffContentType } from "./content-type";

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
const JPEG = Buffer.from("ffd8ffe000104a464946", "hex");
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.from([0x24, 0, 0, 0]), Buffer.from("WEBPVP8 ")]);
const ICO = Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, 0, 0]);

describe("sniffContentType", () => {
  it.each([
    ["image/png", PNG],
    ["image/jpeg", JPEG],
    ["image/webp", WEBP],
    ["image/x-icon", ICO],
    ["image/svg+xml", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ["image/svg+xml", Buffer.from('\uFEFF<?xml version="1.0"?>\n<!-- made by hand -->\n<svg viewBox="0 0 1 1"></svg>')],
  ])("recognises %s", (type, bytes) => {
    expect(sniffContentType(bytes)).toBe(type);
  });

  it.each([
    ["HTML", Buffer.from("<html><body><svg></svg></body></html>")],
    ["plain text", Buffer.from("hello")],
    ["an empty file", Buffer.alloc(0)],
    ["an icon directory with no images", Buffer.from([0, 0, 1, 0, 0, 0])],
    ["a RIFF that is not WebP", Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WAVE")])],
    ["invalid UTF-8 before <svg", Buffer.concat([Buffer.from([0xc3, 0x28]), Buffer.from("<svg/>")])],
  ])("recognises nothing in %s", (_label, bytes) => {
    expect(sniffContentType(bytes)).toBeNull();
  });
});
