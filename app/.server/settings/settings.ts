import type { Prisma, PrismaClient } from "~/generated/prisma/client";
import { SETTING_KEYS, SETTINGS, type SettingKey, type SettingValue } from "./registry";

/** A connection, or a write's transaction (the context's `Db`, named here because the context hands out the settings). */
type Db = Prisma.TransactionClient;

/**
 * Reads configuration entries with a short in-process cache (5 s), so a change made through
 * the Admin API takes effect everywhere within seconds, without a restart.
 */
export interface Settings {
  get<K extends SettingKey>(key: K): Promise<SettingValue<K>>;
  all(): Promise<Array<{ key: SettingKey; value: unknown; default: unknown; description: string; updatedAt: Date | null; updatedBy: string | null }>>;
  set<K extends SettingKey>(key: K, value: SettingValue<K>, updatedBy: string): Promise<void>;
  /** The same settings read (and written) through `db`: inside a write, its transaction's connection. */
  within(db: Db): Settings;
  /**
   * Drops the cached values. A write inside a transaction calls it once committed: another
   * request may have cached the old values between the write and its commit.
   */
  forget(): void;
}

const CACHE_MS = 5_000;

export function createSettings(prisma: PrismaClient): Settings {
  let cache: { at: number; values: Map<string, unknown> } | undefined;
  return settingsOver(prisma, {
    get: () => (cache && Date.now() - cache.at < CACHE_MS ? cache.values : undefined),
    set: (values) => void (cache = values && { at: Date.now(), values }),
  });
}

interface SettingsCache {
  get(): Map<string, unknown> | undefined;
  set(values: Map<string, unknown> | undefined): void;
}

function settingsOver(prisma: Db, cache: SettingsCache): Settings {
  async function stored(): Promise<Map<string, unknown>> {
    const cached = cache.get();
    if (cached) return cached;
    const rows = await prisma.configEntry.findMany({ where: { key: { in: SETTING_KEYS } } });
    const values = new Map<string, unknown>(rows.map((r) => [r.key, r.value]));
    cache.set(values);
    return values;
  }

  return {
    async get(key) {
      const value = (await stored()).get(key);
      const parsed = SETTINGS[key].schema.safeParse(value);
      return (parsed.success ? parsed.data : SETTINGS[key].default) as SettingValue<typeof key>;
    },
    async all() {
      const rows = await prisma.configEntry.findMany({ where: { key: { in: SETTING_KEYS } } });
      const byKey = new Map(rows.map((r) => [r.key, r]));
      return SETTING_KEYS.map((key) => {
        const row = byKey.get(key);
        return {
          key,
          value: row?.value ?? SETTINGS[key].default,
          default: SETTINGS[key].default,
          description: SETTINGS[key].description,
          updatedAt: row?.updatedAt ?? null,
          updatedBy: row?.updatedBy ?? null,
        };
      });
    },
    async set(key, value, updatedBy) {
      const json = value as Prisma.InputJsonValue;
      await prisma.configEntry.upsert({ where: { key }, create: { key, value: json, updatedBy }, update: { value: json, updatedBy } });
      cache.set(undefined);
    },
    within(db) {
      return settingsOver(db, cache);
    },
    forget() {
      cache.set(undefined);
    },
  };
}
