import { type z } from "zod";
import { isRepresentableText } from "~/schemas/text";
import { AccountProfileSchema } from "~/schemas/user";
import type { StagedContext } from "../context";
import { invalidateUser } from "../directory/users";
import type { SignedIn } from "./session";

export type ProfileField = keyof z.infer<typeof AccountProfileSchema>;
export type ProfileOutcome = { ok: true } | { ok: false; fields: Partial<Record<ProfileField, "too_long" | "unstorable" | "invalid">> };

/** A person's own name and language; an empty name is no name. Audited with the fields that changed. */
export async function updateProfile(staged: StagedContext<"cache">, access: SignedIn, input: Record<ProfileField, unknown>): Promise<ProfileOutcome> {
  const fields: Extract<ProfileOutcome, { ok: false }>["fields"] = {};
  for (const [name, value] of Object.entries(input) as Array<[ProfileField, unknown]>) {
    if (typeof value === "string" && !isRepresentableText(value)) fields[name] = "unstorable";
  }
  const parsed = AccountProfileSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path[0] as ProfileField;
      fields[name] ??= issue.code === "too_big" ? "too_long" : "invalid";
    }
  }
  if (!parsed.success || Object.keys(fields).length > 0) return { ok: false, fields };
  const next = parsed.data;
  const { user } = access;
  const changed = (Object.keys(next) as ProfileField[]).filter((name) => next[name] !== user[name]);
  if (changed.length === 0) return { ok: true };
  await staged.transaction(async (ctx) => {
    await ctx.db.user.update({ where: { id: user.id }, data: { ...next, version: { increment: 1 } } });
    ctx.afterCommit(() => invalidateUser(ctx.cache, user.id));
    ctx.audit({ eventType: "account.profile_updated", organizationId: access.organization.id, targetType: "user", targetId: user.id, data: { fields: changed } });
  });
  return { ok: true };
}
