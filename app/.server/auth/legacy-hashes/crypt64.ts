/** The crypt(3) alphabet and its little-endian 24-bit groups, shared by md5-crypt and SHA-crypt. */
const ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Encodes `bytes` taken in the given order of triples (each [high, middle, low]; -1 is a zero byte), `chars` characters per triple. */
export function crypt64(bytes: Uint8Array, order: ReadonlyArray<readonly [number, number, number, number]>): string {
  let out = "";
  for (const [b2, b1, b0, chars] of order) {
    let w = ((b2 < 0 ? 0 : bytes[b2]!) << 16) | ((b1 < 0 ? 0 : bytes[b1]!) << 8) | bytes[b0]!;
    for (let i = 0; i < chars; i++) {
      out += ALPHABET[w & 0x3f];
      w >>= 6;
    }
  }
  return out;
}
