import { createCipheriv, scrypt, type ScryptOptions } from "node:crypto";
import type { z } from "zod";
import type { FirebaseScryptParamsSchema, ScryptParamsSchema } from "./schema";

type Params = z.infer<typeof ScryptParamsSchema>;
type FirebaseParams = z.infer<typeof FirebaseScryptParamsSchema>;

function scryptAsync(password: Buffer, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  // maxmem: what N and r need (128·N·r) with room, or node refuses parameters the bounds allow.
  const maxmem = 128 * (options.N ?? 16_384) * (options.r ?? 8) * 2 + 1024 * 1024;
  return new Promise((resolve, reject) => scrypt(password, salt, keyLength, { ...options, maxmem }, (error, key) => (error ? reject(error) : resolve(key))));
}

/** H for scrypt: the derived key, base64. */
export async function deriveScrypt(params: Params, password: string): Promise<string> {
  const key = await scryptAsync(Buffer.from(password, "utf8"), Buffer.from(params.salt, "base64"), params.keyLength, { N: 2 ** params.logN, r: params.r, p: params.p });
  return key.toString("base64");
}

/**
 * H for Firebase's modified scrypt: scrypt(password, salt + separator, N = 2^memCost, r = rounds,
 * p = 1, 32 bytes) is the AES-256-CTR key (zero IV) that encrypts the project's signer key; the
 * ciphertext, base64, is the hash Firebase exports.
 */
export async function deriveFirebaseScrypt(params: FirebaseParams, password: string): Promise<string> {
  const salt = Buffer.concat([Buffer.from(params.salt, "base64"), Buffer.from(params.saltSeparator, "base64")]);
  const key = await scryptAsync(Buffer.from(password, "utf8"), salt, 32, { N: 2 ** params.memCost, r: params.rounds, p: 1 });
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  return Buffer.concat([cipher.update(Buffer.from(params.signerKey, "base64")), cipher.final()]).toString("base64");
}

/** passlib's adapted base64: `.` for `+`, no padding. */
const ab64 = (text: string) => Buffer.from(text.replace(/\./g, "+"), "base64");
const PASSLIB = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9./+]*)\$([A-Za-z0-9./+]+)$/;

/** passlib's `$scrypt$ln=<logN>,r=<r>,p=<p>$<salt>$<hash>`: the parameters and H, or null. */
export function parsePasslibScrypt(text: string): { params: Params; secret: string } | null {
  const match = PASSLIB.exec(text);
  if (!match) return null;
  const [, logN, r, p, salt, hash] = match;
  const key = ab64(hash!);
  return { params: { scheme: "scrypt", logN: Number(logN), r: Number(r), p: Number(p), salt: ab64(salt!).toString("base64"), keyLength: key.length }, secret: key.toString("base64") };
}
