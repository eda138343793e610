import { z } from "zod";
import { listDeadMail, redriveDeadMail, redriveOneDeadMail, type DeadMail } from "../mail/service";
import { MAIL_QUEUES, type MailJobName } from "../../mail/mail-jobs";
import { pageOf } from "../http/openapi-shapes";
import { MAX_PAGE_SIZE } from "../http/pagination";
import { operation } from "../http/route";

/** Mail that could not be delivered (the dead-letter queue), and sending it again. */
const MailKindSchema = z.enum(MAIL_QUEUES as unknown as [MailJobName, ...MailJobName[]]);
const DeadMailSchema = z.object({
  id: z.uuid(),
  kind: MailKindSchema,
  organizationId: z.uuid().nullable(),
  userId: z.uuid().nullable().describe("The recipient's account; null for an invitation (no account yet) or an address without one"),
  email: z.string().nullable(),
  reason: z.string().describe("Why the last attempt failed: an SMTP reply code (smtp_451), a connection error code (ECONNECTION), or abandoned"),
  attempts: z.number().int().nullable(),
  failedAt: z.iso.datetime(),
  linkExpiresAt: z.iso.datetime().nullable().describe("When the link or code the mail carries stops working"),
  linkExpired: z.boolean().describe("Re-driving is refused once the link has expired: the person must ask for a new one"),
});
const DeadMailQuery = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000).optional(),
    pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    kind: MailKindSchema.optional(),
  })
  .strict();
const NoQuery = z.object({}).strict();
const NoBody = z.object({}).strict().optional();

const toBody = (mail: DeadMail) => ({
  ...mail,
  failedAt: mail.failedAt.toISOString(),
  linkExpiresAt: mail.linkExpiresAt?.toISOString() ?? null,
});

export const deadMailOperations = [
  operation({
    method: "GET",
    path: "/mail/dead-letters",
    operationId: "mail.listDead",
    summary: "Mail that could not be delivered after every retry (the dead-letter queue), newest first",
    tag: "mail",
    permission: "admin:mail:read",
    query: DeadMailQuery,
    response: pageOf(DeadMailSchema),
    handler: async ({ ctx, query }) => {
      const page = await listDeadMail(ctx, query);
      return { body: { ...page, data: page.data.map(toBody) } };
    },
  }),
];

export const deadMailRedriveAllOperations = [
  operation({
    method: "POST",
    path: "/mail/dead-letters/redrive",
    operationId: "mail.redriveAll",
    summary: "Send every dead mail again (up to 500 per call) whose link has not expired; mail with an expired link stays and is counted",
    tag: "mail",
    permission: "admin:mail:write",
    query: NoQuery,
    body: NoBody,
    response: z.object({ redriven: z.number().int(), linkExpired: z.number().int(), queueFull: z.number().int() }),
    handler: async ({ ctx }) => {
      const results = await redriveDeadMail(ctx, "all");
      const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
      const body = { redriven: count("redriven"), linkExpired: count("link_expired"), queueFull: count("queue_full") };
      // One summary entry: a re-drive after an outage of hours is one operator action.
      ctx.audit({ eventType: "mail.redriven_all", data: body });
      return { body };
    },
  }),
];

export const deadMailRedriveOperations = [
  operation({
    method: "POST",
    path: "/mail/dead-letters/{id}/redrive",
    operationId: "mail.redrive",
    summary: "Send one dead mail again, with the same link; 409 link_expired when its link has expired",
    tag: "mail",
    permission: "admin:mail:write",
    params: z.object({ id: z.uuid() }),
    query: NoQuery,
    body: NoBody,
    response: DeadMailSchema,
    handler: async ({ ctx, params }) => {
      const mail = await redriveOneDeadMail(ctx, params.id);
      ctx.audit({
        eventType: "mail.redriven",
        organizationId: mail.organizationId,
        ...(mail.userId ? { targetType: "user", targetId: mail.userId } : {}),
        data: { kind: mail.kind, deadJobId: mail.id },
      });
      return { body: toBody(mail) };
    },
  }),
];
