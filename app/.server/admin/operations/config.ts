import { z } from "zod";
import { notFound, validation } from "../../errors";
import { operation } from "../http/route";
import { isSettingKey, SETTINGS } from "../../settings/registry";
import type { Settings } from "../../settings/settings";

/** Typed system configuration: list, get, set (validated per key; effective within seconds). */
const EntrySchema = z.object({
  key: z.string(),
  value: z.unknown(),
  default: z.unknown(),
  description: z.string(),
  updatedAt: z.iso.datetime().nullable(),
  updatedBy: z.string().nullable(),
});
const KeyParams = z.object({ key: z.string().max(100) });

type Entry = Awaited<ReturnType<Settings["all"]>>[number];
const toEntry = (e: Entry) => ({ ...e, updatedAt: e.updatedAt?.toISOString() ?? null });

export const configOperations = [
  operation({
    method: "GET",
    path: "/config",
    operationId: "config.list",
    summary: "Every configuration entry with its current value and default",
    tag: "config",
    permission: "admin:config:read",
    query: z.object({}).strict(),
    response: z.object({ data: z.array(EntrySchema) }),
    handler: async ({ ctx }) => ({ body: { data: (await ctx.settings.all()).map(toEntry) } }),
  }),
];

export const configKeyOperations = [
  operation({
    method: "GET",
    path: "/config/{key}",
    operationId: "config.get",
    summary: "One configuration entry",
    tag: "config",
    permission: "admin:config:read",
    params: KeyParams,
    query: z.object({}).strict(),
    response: EntrySchema,
    handler: async ({ ctx, params }) => {
      const entry = (await ctx.settings.all()).find((e) => e.key === params.key);
      if (!entry) throw notFound("configuration key");
      return { body: toEntry(entry) };
    },
  }),
  operation({
    method: "PUT",
    path: "/config/{key}",
    operationId: "config.set",
    summary: "Set a configuration entry; the value is checked against the key's type and bounds",
    tag: "config",
    permission: "admin:config:write",
    params: KeyParams,
    query: z.object({}).strict(),
    body: z.object({ value: z.unknown() }).strict(),
    response: EntrySchema,
    handler: async ({ ctx, params, body, admin }) => {
      if (!isSettingKey(params.key)) throw notFound("configuration key");
      const parsed = SETTINGS[params.key].schema.safeParse(body.value);
      if (!parsed.success) throw validation(parsed.error.issues.map((i) => ({ field: "value", message: i.message })));
      const before = (await ctx.settings.all()).find((e) => e.key === params.key)?.value;
      // Through the write's transaction: the entry and its audit record commit together.
      await ctx.settings.set(params.key, parsed.data, admin.id);
      ctx.afterCommit(() => ctx.settings.forget());
      // Token lifetimes live in the providers' configuration: rebuild them everywhere, once the value is committed.
      if (params.key.startsWith("tokens.")) ctx.afterCommit(() => ctx.oidc.invalidate("*"));
      ctx.audit({ eventType: "config.updated", targetType: "config", targetId: params.key, data: { change: { value: parsed.data } }, changes: { before: { value: before }, after: { value: parsed.data } } });
      const entry = (await ctx.settings.all()).find((e) => e.key === params.key)!;
      return { body: toEntry(entry) };
    },
  }),
];
