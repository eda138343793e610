import { z } from "zod";

/**
 * An Argon2 hash in the PHC string format, as argon2 writes it and export packages carry it:
 * `$argon2id$v=19$m=…,t=…,p=…$salt$hash`. The three parameters may come in any order: argon2
 * 0.45 writes them as `m,p,t`, earlier releases as `m,t,p`, and stored hashes of both kinds verify.
 */
const PHC = /^\$(argon2(?:id|i|d))\$v=\d+\$((?:[mtp]=\d+,){2}[mtp]=\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

export interface Argon2Parameters {
  type: "argon2id" | "argon2i" | "argon2d";
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** The algorithm and parameters of a PHC string, or null when it is not one (each of m, t, p exactly once). */
export function argon2Parameters(hash: string): Argon2Parameters | null {
  const match = PHC.exec(hash);
  if (!match) return null;
  const values = new Map(match[2]!.split(",").map((pair) => [pair[0]!, Number(pair.slice(2))] as const));
  if (values.size !== 3) return null;
  return { type: match[1] as Argon2Parameters["type"], memoryCost: values.get("m")!, timeCost: values.get("t")!, parallelism: values.get("p")! };
}

export const Argon2HashSchema = z
  .string()
  .max(512)
  .refine((hash) => argon2Parameters(hash) !== null, "must be an Argon2 PHC string");
