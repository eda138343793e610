import { createHash } from "node:crypto";
import type { z } from "zod";
import { crypt64 } from "./crypt64";
import type { Md5CryptParamsSchema } from "./schema";

type Params = z.infer<typeof Md5CryptParamsSchema>;

const ORDER: ReadonlyArray<readonly [number, number, number, number]> = [
  [0, 6, 12, 4],
  [1, 7, 13, 4],
  [2, 8, 14, 4],
  [3, 9, 15, 4],
  [4, 10, 5, 4],
  [-1, -1, 11, 2],
];

/** Poul-Henning Kamp's md5-crypt (`$1$`), as glibc's crypt(3) computes it. Weak: imported only on request. */
export function md5CryptChecksum(password: Buffer, saltText: string): string {
  const salt = Buffer.from(saltText, "utf8").subarray(0, 8);
  const magic = Buffer.from("$1$");
  const alt = createHash("md5").update(password).update(salt).update(password).digest();
  const ctx = createHash("md5").update(password).update(magic).update(salt);
  for (let left = password.length; left > 0; left -= 16) ctx.update(alt.subarray(0, Math.min(left, 16)));
  for (let n = password.length; n > 0; n >>= 1) ctx.update(n & 1 ? Buffer.alloc(1) : password.subarray(0, 1));
  let final = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const round = createHash("md5");
    round.update(i & 1 ? password : final);
    if (i % 3 !== 0) round.update(salt);
    if (i % 7 !== 0) round.update(password);
    round.update(i & 1 ? final : password);
    final = round.digest();
  }
  return crypt64(final, ORDER);
}

/** H for md5-crypt: the checksum. */
export async function deriveMd5Crypt(params: Params, password: string): Promise<string> {
  return md5CryptChecksum(Buffer.from(password, "utf8"), params.salt);
}

const MD5_CRYPT = /^\$1\$([^$:\n]{0,8})\$([./A-Za-z0-9]{22})$/;

export function parseMd5Crypt(text: string): { params: Params; secret: string } | null {
  const match = MD5_CRYPT.exec(text);
  return match ? { params: { scheme: "md5-crypt", salt: match[1]! }, secret: match[2]! } : null;
}
