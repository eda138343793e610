import { SAML_REFRESH_TICK_MS } from "./federation/saml-jobs";
import { DOMAIN_RECHECK_TICK_MS } from "./domains/jobs";
import type { Logger } from "pino";
import { createMetadataDocumentClients } from "./oidc/storage/client-metadata-documents";
import { createMemoryStore } from "./cache/memory-store";
import { createPostgresStore } from "./cache/postgres-store";
import { createBotChallenges } from "./bot-challenge/challenges";
import { createCacheEpochSource } from "./cache/epoch";
import { createReadThroughCache } from "./cache/read-through";
import { createRedisStore } from "./cache/redis-store";
import { embeddedDatabaseDir, ensureDataDir, loadOrCreateEncryptionKey } from "./config/data-dir";
import { lockDataDir, type DataDirLock } from "./config/data-dir-lock";
import { ConfigError, type Config } from "./config/env";
import { createEncrypter } from "./crypto/encryption";
import { openDatabase, type Database } from "./db/client";
import { applyMigrations, readMigrations } from "./db/migrate";
import { createReadiness } from "./health/readiness";
import { createAuditLog, type AuditLog } from "./audit/audit";
import { createCsrfGuard } from "./auth/csrf";
import { createPasswordHasher } from "./auth/password-hash";
import { createRateLimits, rulesFromSettings } from "./rate-limit/limiters";
import { createTokenMint } from "./crypto/tokens";
import { createPackageSeal } from "./admin/transfer/package-seal";
import { createOtpMint } from "./auth/two-factor/email-otp";
import { JOB_TABLE, registerJobHandlers } from "./job-table";
import { createJobQueue, type JobQueue, type QueueSettings } from "./jobs/queue";
import { createSettings } from "./settings/settings";
import type { ContextSource, FaultHooks } from "./context";
import { createMailer } from "./mail/mailer";
import { createKeyService } from "./oidc/provider/keys";
import { MAX_SIGNED_TOKEN_LIFETIME } from "./oidc/provider/lifetimes";
import { createProviderRegistry, PROVIDER_MAX_AGE_MS, type ProviderRegistry } from "./oidc/provider/registry";
import { createDocumentDirectory, type DocumentDirectory } from "./oidc/edge/document-directory";
import { createDocumentTemplates } from "./oidc/edge/well-known";
import { createMetrics } from "./metrics/metrics";
import { startTracing } from "./tracing/tracing";
import { readPackageVersion } from "./root";
import { createWebhookOutbox } from "./webhooks/outbox";
import { createSsfOutbox } from "./ssf/outbox";
import { createAuditStreamOutbox } from "./audit-stream/outbox";
import { syncDeploymentSinks } from "./audit-stream/deployment";
import { startAuditStreamSweep } from "./audit-stream/sweep";
import { createDnsResolver, type DnsResolver } from "./domains/dns";
import { createLogoutNotices, type LogoutNotices } from "./oidc/features/backchannel-logout";
import { tokenExchangeAuditEntry } from "./oidc/features/token-exchange";

/**
 * Everything a request handler may need, built once per process and handed to Remix through the
 * load context (route modules never build their own connections).
 */
export interface Services extends ContextSource {
  /** Every active organization's discovery and JWKS, compactly (decision 062): the well-known lane's, which no service asks for. */
  documents: DocumentDirectory;
}

export interface CreateServicesOptions {
  /** Overrides the embedded database location (tests use "memory://"). */
  pgliteDir?: string;
  /** A data directory the embedded database starts from (tests: the migrated template). */
  pgliteSeed?: Blob;
  /** Job queue tuning (tests shorten retry delays). */
  queue?: Partial<QueueSettings>;
  /** Key prefix in Redis (tests give each file its own). */
  redisPrefix?: string;
  /** The DATA_DIR lock, when the caller took it already (main.ts's preflight does, before loading the server). */
  dataDirLock?: DataDirLock;
  /** Faults a test injects (context.ts). */
  faults?: FaultHooks;
  /** How long a write waits for its transaction to start (tests shorten it to make it time out for real). */
  transactionMaxWaitMs?: number;
  /** The DNS TXT look-ups of domain verification (tests give a fake resolver). */
  dnsResolver?: DnsResolver;
  /** How often the audit stream looks for sinks with entries due (tests shorten it). */
  auditStreamSweepMs?: number;
}

export async function createServices(config: Config, logger: Logger, options: CreateServicesOptions = {}): Promise<Services> {
  const dataDir = ensureDataDir(config.dataDir);
  const encryptionKey = config.encryptionKey ?? loadOrCreateEncryptionKey(dataDir).key;
  const metrics = createMetrics();
  const release = readPackageVersion();
  const tracing = await startTracing({ ...config.tracing, serviceVersion: release });

  const pgliteDir = options.pgliteDir ?? embeddedDatabaseDir(dataDir);
  // PGlite is single-process: the embedded database on disk belongs to one Porta at a time.
  const lock = options.dataDirLock ?? (!config.databaseUrl && !pgliteDir.startsWith("memory://") ? lockDataDir(dataDir) : undefined);
  let db: Database;
  try {
    db = tracing.observeDatabase(await openDatabase({ databaseUrl: config.databaseUrl, pgliteDir, pgliteSeed: options.pgliteSeed }));
  } catch (error) {
    lock?.release();
    throw error;
  }
  try {
    const applied = await applyMigrations(db);
    if (applied.length > 0) logger.info({ migrations: applied }, "applied database migrations");
  } catch (error) {
    await db.close();
    lock?.release();
    throw error;
  }

  // PostgreSQL holds what must survive (decision 024); Redis, when configured, only accelerates.
  const store = createPostgresStore(db, logger);
  const cacheStore = tracing.observeCache(config.redisUrl ? await createRedisStore(config.redisUrl, logger, options.redisPrefix) : createMemoryStore());
  // Invalidations reach every process's copies through the database's notifications; on the
  // embedded database (one process, the DATA_DIR lock) they stay in this one.
  const cache = await createReadThroughCache(cacheStore, logger, { notifications: db, epochs: createCacheEpochSource(db) });
  const encrypter = createEncrypter(encryptionKey);

  // A key change reaches the providers of its organization only ("*": the shared keys, or a
  // rotation of every organization) through the registry, which itself needs the keys.
  const registryRef: { current?: ProviderRegistry } = {};
  // A sign-out at a provider queues its logout tokens; the queue is made after the providers' registry.
  const noticesRef: { current?: LogoutNotices } = {};
  // A token exchange is audited by the audit log, which is made after the providers' registry.
  const auditRef: { current?: AuditLog } = {};
  // A sign-out's audit entry hands what it caused to the queue, which is made after the providers' registry too.
  const jobsRef: { current?: Pick<JobQueue, "handOver"> } = {};
  const settings = createSettings(db.prisma);
  const keys = createKeyService({
    prisma: db.prisma,
    encrypter,
    // A client's own access token lifetime (decision 036) may exceed the setting: a key outlives the longest.
    maxSignedTokenLifetimeSeconds: async (db) =>
      Math.max(
        MAX_SIGNED_TOKEN_LIFETIME,
        await settings.within(db).get("tokens.accessTokenTtlSeconds"),
        (await db.client.aggregate({ _max: { accessTokenTtlSeconds: true } }))._max.accessTokenTtlSeconds ?? 0,
      ),
    onChange: async (organizationId) => registryRef.current?.invalidate(organizationId),
  });
  if (!(await keys.canDecryptStoredKeys())) {
    await store.close().catch(() => undefined);
    await cache.close().catch(() => undefined);
    await db.close();
    lock?.release();
    throw new ConfigError(
      "ENCRYPTION_KEY",
      "this key (or DATA_DIR/encryption.key) cannot decrypt the signing keys stored in the database; start Porta with the key this database was created with",
    );
  }
  // Organizations get their keys when created or first used: nothing here runs per organization.
  await keys.retireLegacyKeys();
  const clientDocuments = createMetadataDocumentClients({ allowPrivateNetworks: config.outboundAllowPrivateNetworks });
  const oidc = await createProviderRegistry({
    baseUrl: config.baseUrl,
    superAdminSlug: config.superAdminSlug,
    prisma: db.prisma,
    cache,
    store,
    notifications: db,
    sql: db,
    keys,
    encryptionKey,
    logger,
    settings,
    ...(config.providerPoolBytes ? { poolBytes: config.providerPoolBytes } : {}),
    allowPrivateNetworks: config.outboundAllowPrivateNetworks,
    clientDocuments,
    onProviderBuilt: (provider) => metrics.observeProvider(provider),
    onBackchannelLogout: async (notice) => noticesRef.current?.send([notice]),
    onTokenExchanged: async (organizationId, record) => {
      await auditRef.current?.record(tokenExchangeAuditEntry(organizationId, record));
    },
    onSignedOut: async (record) => {
      const jobIds = await auditRef.current?.record({
        eventType: "auth.logout",
        organizationId: record.organizationId,
        actorType: "user",
        actorId: record.userId,
        targetType: "user",
        targetId: record.userId,
        ip: record.ip,
        data: { clientId: record.clientId, allClients: record.allClients },
      });
      // What the entry caused (webhook deliveries, security events) is handed to the queue now, not at the next sweep.
      if (jobIds && jobIds.length > 0) await jobsRef.current?.handOver(jobIds);
    },
  });
  registryRef.current = oidc;
  const documents = createDocumentDirectory({
    registry: oidc,
    templates: createDocumentTemplates(oidc, config.baseUrl),
    baseUrl: config.baseUrl,
    maxAgeMs: PROVIDER_MAX_AGE_MS,
    logger,
    ...(config.documentDirectoryBytes ? { maxBytes: config.documentDirectoryBytes } : {}),
  });

  const passwords = createPasswordHasher();
  // Computed now, so that the first login for an unknown email costs what every other does.
  await passwords.dummyHash();

  // Expired durable tokens and used SAML assertion IDs are deleted in the background; reads already ignore them.
  const sweeper = setInterval(() => {
    db.prisma.oidcPayload.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch((error: unknown) => {
      logger.warn({ err: error }, "could not delete expired tokens");
    });
    // Used SAML assertion IDs past the time their assertion could be accepted (decision 081).
    db.prisma.samlAssertionUse.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch((error: unknown) => {
      logger.warn({ err: error }, "could not delete expired SAML assertion uses");
    });
  }, 10 * 60_000);
  sweeper.unref();

  const mailer = metrics.observeMailer(tracing.observeMailer(createMailer(config, logger)));

  // Without DATABASE_URL this process alone holds the database (the DATA_DIR lock).
  const jobs = metrics.observeJobs(tracing.observeJobs(createJobQueue(db, logger, JOB_TABLE, { soleProcess: !config.databaseUrl, ...options.queue })));
  metrics.watch({ db, cache, cacheKind: config.redisUrl ? "redis" : "memory", providerPool: () => oidc.poolStats(), documentDirectory: () => documents.stats(), jobs });
  jobsRef.current = jobs;
  const logoutNotices = createLogoutNotices(db.prisma, jobs, logger);
  // SAML connections' metadata URLs are fetched again once their copy is six hours old
  // (federation/saml-jobs.ts); each tick only asks for a run, which skips what is not due.
  const samlRefresh = setInterval(() => {
    jobs.enqueue("saml-metadata-refresh", {}).catch((error: unknown) => logger.warn({ err: error }, "could not ask for the SAML metadata refresh"));
  }, SAML_REFRESH_TICK_MS);
  samlRefresh.unref();
  // Organizations' domains: verified ones re-checked daily, pending ones retried hourly a few times (domains/jobs.ts).
  const domainRecheck = setInterval(() => {
    jobs.enqueue("domain-recheck", {}).catch((error: unknown) => logger.warn({ err: error }, "could not ask for the domain re-check"));
  }, DOMAIN_RECHECK_TICK_MS);
  domainRecheck.unref();
  noticesRef.current = logoutNotices;
  // Each audited write also writes the webhook deliveries (decision 047) and the audit stream's rows (decision 092) and Shared Signals events (decision 093) it causes.
  const audit = metrics.observeAudit(createAuditLog(db.prisma, logger, [createWebhookOutbox(jobs, logger), createAuditStreamOutbox(jobs, logger), createSsfOutbox(jobs, logger, (slug) => `${config.baseUrl}/${slug}`)]));
  auditRef.current = audit;
  const services: Services = {
    config,
    logger,
    db,
    store,
    cache,
    encrypter,
    keys,
    oidc,
    documents,
    audit,
    limits: metrics.observeLimits(createRateLimits(db, rulesFromSettings(settings))),
    passwords,
    csrf: createCsrfGuard(encryptionKey),
    mailer,
    tokens: createTokenMint(encryptionKey),
    otp: createOtpMint(encryptionKey),
    packageSeal: createPackageSeal(encryptionKey),
    settings,
    jobs,
    metrics,
    tracing,
    release,
    clientDocuments,
    dnsResolver: options.dnsResolver ?? createDnsResolver(),
    botChallenges: createBotChallenges({ encryptionKey, store, count: metrics.countBotChallenge }),
    logoutNotices,
    readiness: createReadiness({
      ping: () => db.ping(1_000),
      appliedMigrations: async () =>
        (await db.prisma.$queryRaw<Array<{ migration_name: string }>>`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`).map((row) => row.migration_name),
      shippedMigrations: async () => (await readMigrations()).map((m) => m.name),
    }),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.transactionMaxWaitMs !== undefined ? { transactionMaxWaitMs: options.transactionMaxWaitMs } : {}),
    async close() {
      clearInterval(sweeper);
      clearInterval(samlRefresh);
      clearInterval(domainRecheck);
      await jobs.stop();
      documents.close();
      await oidc.close();
      mailer.close();
      await store.close();
      await cache.close();
      await db.close();
      lock?.release();
      await tracing.shutdown();
    },
  };
  registerJobHandlers(services);
  try {
    await syncDeploymentSinks(db.prisma, encrypter, config.auditSinks ?? [], config.outboundAllowPrivateNetworks);
    // On the embedded database this process is the only drainer: a claim still held is the previous process's.
    if (!config.databaseUrl) await db.prisma.auditSink.updateMany({ where: { drainLease: { not: null } }, data: { drainLease: null, drainingUntil: null } });
  } catch (error) {
    await services.close().catch(() => undefined);
    throw error;
  }
  await jobs.start();
  const auditStreamSweep = startAuditStreamSweep(db, jobs, logger, options.auditStreamSweepMs);
  const close = services.close;
  services.close = async () => {
    auditStreamSweep.stop();
    await close();
  };
  return services;
}
