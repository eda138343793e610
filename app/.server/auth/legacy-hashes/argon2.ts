import argon2 from "argon2";
import type { z } from "zod";
import type { Argon2ParamsSchema } from "./schema";

type Params = z.infer<typeof Argon2ParamsSchema>;

const TYPES = { argon2d: argon2.argon2d, argon2i: argon2.argon2i, argon2id: argon2.argon2id } as const;

/**
 * H for an Argon2 hash made with other parameters than Porta's: the raw tag, base64. This is a
 * derivation with the imported salt, not a verification: the attempt's one verification is of
 * Porta's own Argon2id hash of H.
 */
export async function deriveArgon2(params: Params, password: string): Promise<string> {
  const raw = await argon2.hash(password, {
    type: TYPES[params.type],
    version: params.version,
    memoryCost: params.memoryCost,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
    salt: Buffer.from(params.salt, "base64"),
    hashLength: params.hashLength,
    raw: true,
  });
  return raw.toString("base64");
}

/** PHC strings use base64 without padding. */
const phc64 = (text: string) => Buffer.from(text, "base64");
const PHC = /^\$(argon2id|argon2i|argon2d)\$(?:v=(\d+)\$)?([a-z]=\d{1,7}(?:,[a-z]=\d{1,7}){2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** `$argon2i$v=19$m=…,t=…,p=…$<salt>$<hash>` (and argon2d, argon2id): the parameters and H, or null. */
export function parseArgon2(text: string): { params: Params; secret: string } | null {
  const match = PHC.exec(text);
  if (!match) return null;
  const [, type, version, list, salt, hash] = match;
  // m, t and p in any order (the argon2 package writes m,p,t), each once.
  const values = new Map(list!.split(",").map((pair) => [pair[0]!, Number(pair.slice(2))] as const));
  const [m, t, p] = [values.get("m"), values.get("t"), values.get("p")];
  if (values.size !== 3 || m === undefined || t === undefined || p === undefined) return null;
  const key = phc64(hash!);
  return {
    params: {
      scheme: "argon2",
      type: type as Params["type"],
      // A PHC string without v= is Argon2 1.0 (0x10).
      version: (version === undefined ? 16 : Number(version)) as Params["version"],
      memoryCost: Number(m),
      timeCost: Number(t),
      parallelism: Number(p),
      salt: phc64(salt!).toString("base64"),
      hashLength: key.length,
    },
    secret: key.toString("base64"),
  };
}
