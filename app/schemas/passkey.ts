import { z } from "zod";
import { UuidSchema } from "./uuid";

/** A user's passkey as the Admin API shows it: never the key material (decision 041). */
export const PasskeySchema = z.object({
  id: UuidSchema,
  userId: UuidSchema,
  name: z.string(),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
  /** singleDevice (bound to one authenticator) or multiDevice (a synced passkey). */
  deviceType: z.enum(["singleDevice", "multiDevice"]),
  backedUp: z.boolean(),
  /** The authenticator model when it names one (AAGUID), else null. */
  aaguid: z.string().nullable(),
  transports: z.array(z.string()),
});
export type Passkey = z.infer<typeof PasskeySchema>;
