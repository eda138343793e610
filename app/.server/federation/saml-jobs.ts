import { z } from "zod";
import type { JobServiceContext } from "../context";
import { AppError } from "../errors";
import { defineJob } from "../jobs/job";
import { storeRefreshedSamlMetadata } from "./providers";
import { MetadataFetchError, refreshedSettings, SAML_METADATA_REFRESH_MS } from "./saml-connections";
import { getSamlSettings } from "./saml-settings";

/**
 * The scheduled refresh of SAML connections' metadata (decision 081): every connection made from a
 * metadata URL is fetched again once its copy is six hours old, so an IdP's certificate rollover
 * reaches Porta without an administrator. A change is stored and audited with what changed; a
 * failure keeps the settings as they were, logs one line and is tried again at the next run.
 * `providerId` refreshes one connection now, whatever the age of its copy.
 */
const samlRefreshPayload = z.object({ providerId: z.string().optional() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    "saml-metadata-refresh": typeof samlRefreshPayload;
  }
}

/** How often the process asks for a run; each run fetches only the copies that are due. */
export const SAML_REFRESH_TICK_MS = 30 * 60_000;

type RefreshContext = JobServiceContext<"config" | "logger">;

const reasonOf = (error: unknown) =>
  error instanceof AppError ? (error.details?.map((d) => `${d.field} ${d.message}`).join("; ") ?? error.message) : error instanceof MetadataFetchError ? error.reason : "unexpected error";

export async function refreshDueSamlMetadata(ctx: RefreshContext, data: { providerId?: string | undefined }, now: Date = new Date()): Promise<{ refreshed: number; changed: number; failed: number }> {
  const rows = await ctx.db.identityProvider.findMany({ where: { kind: "saml", ...(data.providerId ? { id: data.providerId } : {}) } });
  const due = rows.filter((row) => {
    const settings = getSamlSettings(row);
    if (!settings?.metadataUrl) return false;
    if (data.providerId) return true;
    return !settings.metadataRefreshedAt || now.getTime() - Date.parse(settings.metadataRefreshedAt) >= SAML_METADATA_REFRESH_MS;
  });
  const counts = { refreshed: 0, changed: 0, failed: 0 };
  for (const row of due) {
    try {
      // Fetched before the transaction opens: a slow IdP holds no database connection.
      const next = await refreshedSettings(ctx, row);
      await ctx.transaction(async (tx) => {
        const { change } = await storeRefreshedSamlMetadata(tx, row, next);
        if (change) {
          tx.audit({ eventType: "identity_provider.saml_metadata_refreshed", organizationId: row.organizationId, targetType: "identity_provider", targetId: row.id, data: { trigger: "schedule", change } });
          counts.changed += 1;
        }
      });
      counts.refreshed += 1;
    } catch (error) {
      counts.failed += 1;
      ctx.logger.warn({ event: "saml_metadata_refresh_failed", providerId: row.id, organizationId: row.organizationId, reason: reasonOf(error) }, "SAML metadata refresh failed; the connection keeps its settings");
    }
  }
  return counts;
}

export const samlMetadataRefreshJob = defineJob<"saml-metadata-refresh", RefreshContext>({
  name: "saml-metadata-refresh",
  payload: samlRefreshPayload,
  handler: async (ctx, data) => void (await refreshDueSamlMetadata(ctx, data)),
  // Failures are per connection and logged; the next tick tries again.
  retrySchedule: [],
  deadLetter: false,
});
