import { z } from "zod";
import { isRepresentableText } from "~/schemas/text";

/**
 * What a receiver sends the stream management endpoints (SSF 1.0 §8), as zod shapes: stream
 * configurations and subject identifiers (RFC 9493). Anything else (an unknown subject format,
 * a member missing, an over-long value, text PostgreSQL cannot store) is refused before a row is
 * read or written.
 */
export const PUSH = "urn:ietf:rfc:8935";
export const POLL = "urn:ietf:rfc:8936";

const MAX_TEXT = 1000;
const text = (max = MAX_TEXT) =>
  z
    .string()
    .min(1, "must not be empty")
    .max(max, `must have at most ${max} characters`)
    .refine(isRepresentableText, "contains a character that cannot be stored (NUL or an unpaired surrogate)");

/**
 * The subject formats a stream may name (RFC 9493): `iss_sub` (this organization's issuer and a
 * user's `sub`) and `email`. Others (phone numbers, opaque ids, aliases) name nobody Porta could
 * match to a user, and are refused rather than stored to never match.
 */
const IssSubSchema = z.strictObject({ format: z.literal("iss_sub"), iss: text(), sub: text(255) });
const EmailSchema = z.strictObject({ format: z.literal("email"), email: text(320).refine((v) => /^[^\s@]+@[^\s@]+$/.test(v), "must be an email address") });
export const SubjectSchema = z.discriminatedUnion("format", [IssSubSchema, EmailSchema], { error: "format must be iss_sub or email" });
export type SubjectId = z.infer<typeof SubjectSchema>;

/** A subject's key, unique in its stream: the same person named twice the same way is one row. */
export function subjectKeyOf(subject: SubjectId): string {
  return subject.format === "iss_sub" ? `iss_sub ${subject.iss} ${subject.sub}` : `email ${subject.email.toLowerCase()}`;
}

const StreamIdSchema = z.uuid({ error: "must be a stream_id this transmitter gave" });

const DeliverySchema = z.discriminatedUnion(
  "method",
  [
    z.strictObject({
      method: z.literal(PUSH),
      endpoint_url: text(2000).refine((v) => URL.canParse(v), "must be an absolute URL"),
      authorization_header: text(4000).optional(),
    }),
    // The poll URL is the transmitter's to give (RFC 8936): a receiver's is ignored.
    z.strictObject({ method: z.literal(POLL), endpoint_url: z.string().max(2000).optional() }),
  ],
  { error: `delivery.method must be ${PUSH} or ${POLL}` },
);

const EventsSchema = z.array(text(500)).max(50, "must have at most 50 entries");

/** POST (create) and PUT (replace) of a stream's configuration; the transmitter's members are ignored. */
export const StreamWriteSchema = z.object({
  stream_id: StreamIdSchema.optional(),
  delivery: DeliverySchema,
  events_requested: EventsSchema.default([]),
  description: z.string().max(500, "must have at most 500 characters").refine(isRepresentableText, "contains a character that cannot be stored").optional(),
});

/** PATCH: the members given change, the others stay. */
export const StreamPatchSchema = z.object({
  stream_id: StreamIdSchema,
  delivery: DeliverySchema.optional(),
  events_requested: EventsSchema.optional(),
  description: z.string().max(500).refine(isRepresentableText, "contains a character that cannot be stored").optional(),
});

export const StatusWriteSchema = z.object({
  stream_id: StreamIdSchema,
  status: z.enum(["enabled", "paused", "disabled"], { error: "status must be enabled, paused or disabled" }),
  reason: text(500).optional(),
});

export const SubjectWriteSchema = z.object({
  stream_id: StreamIdSchema,
  subject: SubjectSchema,
  verified: z.boolean().optional(),
});

export const VerificationSchema = z.object({
  stream_id: StreamIdSchema,
  state: text(500).optional(),
});

const JtiSchema = text(100);
/** RFC 8936 §2.4: acknowledgements, errors, how many to send and whether to wait. */
export const PollSchema = z.object({
  ack: z.array(JtiSchema).max(1000, "must have at most 1000 entries").default([]),
  setErrs: z
    .record(JtiSchema, z.object({ err: text(100), description: z.string().max(1000).optional() }))
    .refine((r) => Object.keys(r).length <= 1000, "must have at most 1000 entries")
    .default({}),
  maxEvents: z.number().int().min(0).max(1000).optional(),
  returnImmediately: z.boolean().optional(),
});

/** The first problem of a refused body, as SSF's error description: `member: message`. */
export function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "The request is not valid.";
  const at = issue.path.join(".");
  return at ? `${at}: ${issue.message}` : issue.message;
}
