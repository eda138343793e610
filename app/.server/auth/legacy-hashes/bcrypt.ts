import bcrypt from "bcryptjs";
import type { z } from "zod";
import type { BcryptParamsSchema } from "./schema";

type Params = z.infer<typeof BcryptParamsSchema>;

/** H for bcrypt: the 31-character checksum that follows the salt in `$2b$<cost>$<salt><checksum>`. */
export async function deriveBcrypt(params: Params, password: string): Promise<string> {
  const full = await bcrypt.hash(password, `$${params.variant}$${String(params.cost).padStart(2, "0")}$${params.salt}`);
  return full.slice(-31);
}

const BCRYPT = /^\$(2[aby])\$(\d{2})\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;

/** `$2a$`, `$2b$` or `$2y$` strings: the parameters and H, or null when the string is not one. */
export function parseBcrypt(text: string): { params: Params; secret: string } | null {
  const match = BCRYPT.exec(text);
  if (!match) return null;
  const [, variant, cost, salt, checksum] = match;
  return { params: { scheme: "bcrypt", variant: variant as Params["variant"], cost: Number(cost), salt: salt! }, secret: checksum! };
}
