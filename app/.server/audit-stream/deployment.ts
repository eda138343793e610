import type { PrismaClient } from "~/generated/prisma/client";
import type { AuditSinkCreate } from "~/schemas/audit-sink";
import { ConfigError } from "../config/env";
import type { Encrypter } from "../crypto/encryption";
import { assertPublicHost } from "../outbound/guard";
import { lastFourOf, sealSinkSecret } from "./secrets";

/**
 * The deployment's sinks (AUDIT_SINKS, decision 092) are rows like an organization's, with no
 * organization and their name as `configName`, written at each start: a delivery goes through the
 * same outbox rows whichever configured it, so it survives a crash. A sink taken out of the
 * variable is deleted with what it still had waiting; a changed one keeps its line.
 */
export async function syncDeploymentSinks(prisma: PrismaClient, encrypter: Encrypter, sinks: readonly AuditSinkCreate[], allowPrivateNetworks: boolean): Promise<void> {
  for (const [i, sink] of sinks.entries()) {
    if (!sink.url) continue;
    try {
      assertPublicHost(new URL(sink.url), allowPrivateNetworks);
    } catch {
      throw new ConfigError("AUDIT_SINKS", `at ${i}.url: names a loopback or private address; set OUTBOUND_ALLOW_PRIVATE_NETWORKS=true to allow it`);
    }
  }
  await prisma.$transaction(async (tx) => {
    await tx.auditSink.deleteMany({ where: { configName: { not: null, notIn: sinks.map((s) => s.name) } } });
    for (const sink of sinks) {
      const fields = {
        name: sink.name,
        kind: sink.kind,
        url: sink.url ?? "",
        headerName: sink.headerName ?? null,
        caPem: sink.caPem ?? null,
        eventFamilies: sink.eventFamilies ?? [],
        enabled: sink.enabled ?? true,
        secretLast4: sink.secret ? lastFourOf(sink.secret) : null,
      };
      const row = await tx.auditSink.upsert({ where: { configName: sink.name }, create: { ...fields, configName: sink.name }, update: fields });
      await tx.auditSink.update({ where: { id: row.id }, data: { secretEncrypted: sink.secret ? sealSinkSecret(encrypter, row.id, sink.secret) : null } });
    }
  });
}
