import { createHash } from "node:crypto";
import type { z } from "zod";
import { crypt64 } from "./crypt64";
import type { ShaCryptParamsSchema } from "./schema";

type Params = z.infer<typeof ShaCryptParamsSchema>;
type Algorithm = "sha256" | "sha512";

/**
 * SHA-256-crypt and SHA-512-crypt (`$5$`, `$6$`) as Ulrich Drepper's specification defines them;
 * glibc's crypt(3) computes the same. H is the checksum after the last `$`.
 */
function order(algorithm: Algorithm): Array<[number, number, number, number]> {
  if (algorithm === "sha256") {
    const triples: Array<[number, number, number, number]> = [];
    for (let i = 0; i < 10; i++) {
      const x = [i, i + 10, i + 20] as const;
      const rotated = i % 3 === 0 ? [x[0], x[1], x[2]] : i % 3 === 1 ? [x[2], x[0], x[1]] : [x[1], x[2], x[0]];
      triples.push([rotated[0]!, rotated[1]!, rotated[2]!, 4]);
    }
    triples.push([-1, 31, 30, 3]);
    return triples;
  }
  const triples: Array<[number, number, number, number]> = [];
  for (let i = 0; i < 21; i++) {
    const x = [i, i + 21, i + 42] as const;
    const rotated = i % 3 === 0 ? [x[0], x[1], x[2]] : i % 3 === 1 ? [x[1], x[2], x[0]] : [x[2], x[0], x[1]];
    triples.push([rotated[0]!, rotated[1]!, rotated[2]!, 4]);
  }
  triples.push([-1, -1, 63, 2]);
  return triples;
}

const ORDER = { sha256: order("sha256"), sha512: order("sha512") };

/** `length` bytes of `block` repeated. */
function stretch(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += block.length) block.copy(out, i, 0, Math.min(block.length, length - i));
  return out;
}

export function shaCryptChecksum(algorithm: Algorithm, password: Buffer, saltText: string, rounds: number): string {
  const salt = Buffer.from(saltText, "utf8").subarray(0, 16);
  const digest = (...parts: Buffer[]) => {
    const hash = createHash(algorithm);
    for (const part of parts) hash.update(part);
    return hash.digest();
  };
  const b = digest(password, salt, password);
  const a = createHash(algorithm).update(password).update(salt);
  a.update(stretch(b, password.length));
  for (let n = password.length; n > 0; n >>= 1) a.update(n & 1 ? b : password);
  const aDigest = a.digest();

  const dp = createHash(algorithm);
  for (let i = 0; i < password.length; i++) dp.update(password);
  const p = stretch(dp.digest(), password.length);
  const ds = createHash(algorithm);
  for (let i = 0; i < 16 + aDigest[0]!; i++) ds.update(salt);
  const s = stretch(ds.digest(), salt.length);

  let c = aDigest;
  for (let i = 0; i < rounds; i++) {
    const h = createHash(algorithm);
    h.update(i & 1 ? p : c);
    if (i % 3 !== 0) h.update(s);
    if (i % 7 !== 0) h.update(p);
    h.update(i & 1 ? c : p);
    c = h.digest();
  }
  return crypt64(c, ORDER[algorithm]);
}

/** H for SHA-crypt: the checksum. */
export async function deriveShaCrypt(params: Params, password: string): Promise<string> {
  return shaCryptChecksum(params.scheme === "sha256-crypt" ? "sha256" : "sha512", Buffer.from(password, "utf8"), params.salt, params.rounds);
}

const SHA_CRYPT = /^\$([56])\$(?:rounds=(\d{1,9})\$)?([^$:\n]{0,16})\$([./A-Za-z0-9]{43}|[./A-Za-z0-9]{86})$/;

/** `$5$[rounds=N$]<salt>$<checksum>` and `$6$…`: the parameters and H, or null. Without rounds=, 5000. */
export function parseShaCrypt(text: string): { params: Params; secret: string } | null {
  const match = SHA_CRYPT.exec(text);
  if (!match) return null;
  const [, id, rounds, salt, checksum] = match;
  if (checksum!.length !== (id === "5" ? 43 : 86)) return null;
  // glibc clamps rounds to at least 1000 and at most 999,999,999.
  const count = rounds === undefined ? 5000 : Math.max(1000, Number(rounds));
  return { params: { scheme: id === "5" ? "sha256-crypt" : "sha512-crypt", rounds: count, salt: salt! }, secret: checksum! };
}
