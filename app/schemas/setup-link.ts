import { z } from "zod";

/**
 * Setup links (decision 089), as the Admin API shows them: a time-limited link with which a
 * customer's IT person configures one organization's SSO connections, SCIM tokens and domains.
 * The URL (with its token) is in the creating response only.
 */
export const DEFAULT_SETUP_LINK_DAYS = 7;
export const MAX_SETUP_LINK_DAYS = 30;

export const SETUP_LINK_STATUSES = ["pending", "opened", "finished", "expired", "revoked"] as const;

export const SetupLinkSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  note: z.string().nullable(),
  /** pending (not opened yet), opened (bound to the browser that opened it), or why it no longer works. */
  status: z.enum(SETUP_LINK_STATUSES),
  expiresAt: z.iso.datetime(),
  openedAt: z.iso.datetime().nullable(),
  finishedAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
  createdById: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

/** The link's address is in this one response and never again (only its token's SHA-256 is kept). */
export const CreatedSetupLinkSchema = SetupLinkSchema.extend({
  url: z.url(),
});

export const SetupLinkCreateSchema = z
  .object({
    /** Default 7 days, at most 30: the link hands out SSO and provisioning settings. */
    expiresInDays: z
      .number()
      .int("must be a whole number of days")
      .min(1, "must be at least 1 day")
      .max(MAX_SETUP_LINK_DAYS, `must be at most ${MAX_SETUP_LINK_DAYS} days`)
      .default(DEFAULT_SETUP_LINK_DAYS),
    /** Whom the link is for (e.g. "Jane, Acme IT"): shown in the list and on the setup pages. */
    note: z.string().trim().max(200, "must have at most 200 characters").optional(),
  })
  .strict();

export type SetupLink = z.infer<typeof SetupLinkSchema>;
export type CreatedSetupLink = z.infer<typeof CreatedSetupLinkSchema>;
export type SetupLinkCreate = z.infer<typeof SetupLinkCreateSchema>;
