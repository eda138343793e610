import type { AssetContentType } from "~/schemas/branding";

/**
 * What an uploaded file really is, from its first bytes (magic numbers), so that a declared
 * Content-Type is never trusted alone: a PNG sent as image/svg+xml, or markup sent as image/png,
 * is refused before anything is stored.
 */
const startsWith = (bytes: Uint8Array, signature: number[], at = 0) => signature.every((byte, i) => bytes[at + i] === byte);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Text that opens like an XML document or an <svg> element (after a BOM, blanks, comments). */
const SVG_START = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>/]/;

function isSvgText(bytes: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  return SVG_START.test(text);
}

export function sniffContentType(bytes: Uint8Array): AssetContentType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  // ICONDIR: reserved 0, type 1 (icon), at least one image.
  if (bytes.length >= 6 && startsWith(bytes, [0x00, 0x00, 0x01, 0x00]) && (bytes[4]! | (bytes[5]! << 8)) > 0) return "image/x-icon";
  if (isSvgText(bytes)) return "image/svg+xml";
  return null;
}
