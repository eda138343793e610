import { z } from "zod";

/**
 * A Shared Signals stream as the Admin API shows it (decision 093), read-only: which receiver
 * (client) made it, how it delivers, what it asked for, its state, and how many subjects and
 * undelivered events it has. The push Authorization is never shown.
 */
export const SsfStreamSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  clientId: z.string().describe("The receiver's client, which manages the stream"),
  audience: z.string().describe("The SETs' aud"),
  deliveryMethod: z.enum(["urn:ietf:rfc:8935", "urn:ietf:rfc:8936"]).describe("Push (RFC 8935) or poll (RFC 8936)"),
  pushEndpointUrl: z.string().nullable(),
  status: z.enum(["enabled", "paused", "disabled"]),
  reason: z.string().nullable(),
  description: z.string().nullable(),
  eventsRequested: z.array(z.string()),
  eventsDelivered: z.array(z.string()),
  subjects: z.number().int().describe("Subjects the receiver added"),
  waitingEvents: z.number().int().describe("SETs not sent yet: waiting for a push attempt or a retry, or for their first poll"),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type SsfStreamView = z.infer<typeof SsfStreamSchema>;
