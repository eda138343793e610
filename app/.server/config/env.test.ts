import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "./env";

/** Runs parseConfig and returns the ConfigError it throws (fails the test when it does not throw one). */
function configErrorOf(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}

describe("parseConfig", () => {
  it("gives the documented defaults for an empty environment", () => {
    const config = parseConfig({});
    expect(config).toEqual({
      nodeEnv: "development",
      port: 3000,
      baseUrl: "http://localhost:3000",
      databaseUrl: undefined,
      redisUrl: undefined,
      dataDir: "./.data",
      superAdminSlug: "porta-admin",
      adminBootstrap: { email: undefined, password: undefined },
      encryptionKey: undefined,
      smtp: { host: undefined, port: 587, user: undefined, pass: undefined, from: undefined },
      logLevel: "info",
      trustProxy: ["loopback"],
      shutdownDelayMs: 0,
      outboundAllowPrivateNetworks: false,
      metrics: { port: undefined, token: undefined },
      tracing: { endpoint: undefined, serviceName: "porta" },
      auditSinks: [],
    });
  });

  it("reads AUDIT_SINKS as a JSON array of sinks and names the bad one at start, never echoing a secret", () => {
    const sinks = [{ name: "splunk", kind: "splunk_hec", url: "https://splunk.example.com:8088", secret: "hec-secret-value", eventFamilies: ["auth.*"] }];
    expect(parseConfig({ AUDIT_SINKS: JSON.stringify(sinks) }).auditSinks).toEqual(sinks);
    const cases: Array<[unknown, RegExp]> = [
      ["not json", /JSON array/],
      [{ name: "x" }, /expected array/],
      [[{ name: "x", kind: "smtp", url: "https://x.example.com" }], /at 0\.kind/],
      [[{ name: "x", kind: "jsonl" }], /at 0\.url: is required/],
      [[{ name: "x", kind: "syslog", url: "tls://siem.example.com" }], /at 0\.url: must name the collector's port/],
      [[{ name: "x", kind: "otlp" }], /at 0\.kind: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT/],
      [[{ name: "x", kind: "jsonl", url: "https://a.example.com" }, { name: "x", kind: "jsonl", url: "https://b.example.com" }], /at 1\.name: "x" is named twice/],
      [[{ name: "x", kind: "jsonl", url: "https://a.example.com", secret: "hec-secret-value\r\nX: 1" }], /at 0\.secret/],
    ];
    for (const [value, message] of cases) {
      const error = configErrorOf({ AUDIT_SINKS: typeof value === "string" ? value : JSON.stringify(value) });
      expect(error.variable).toBe("AUDIT_SINKS");
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain("hec-secret-value");
    }
  });

  it("reads TRUST_PROXY as a hop count, none, or a list of addresses, CIDRs and named ranges", () => {
    expect(parseConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(parseConfig({ TRUST_PROXY: "0" }).trustProxy).toBe(0);
    expect(parseConfig({ TRUST_PROXY: "none" }).trustProxy).toBe(0);
    expect(parseConfig({ TRUST_PROXY: " 10.0.0.0/8, loopback ,fd00::/8,192.168.1.7 " }).trustProxy).toEqual(["10.0.0.0/8", "loopback", "fd00::/8", "192.168.1.7"]);
  });

  it("reads METRICS_PORT and METRICS_TOKEN (both unset: no metrics anywhere)", () => {
    const token = "t".repeat(32);
    expect(parseConfig({ METRICS_PORT: "9464", METRICS_TOKEN: token }).metrics).toEqual({ port: 9464, token });
  });

  it("reads SHUTDOWN_DELAY_SECONDS as the not-ready time before a drain (default 0)", () => {
    expect(parseConfig({}).shutdownDelayMs).toBe(0);
    expect(parseConfig({ SHUTDOWN_DELAY_SECONDS: "2.5" }).shutdownDelayMs).toBe(2500);
  });

  it("reads OIDC_PROVIDER_POOL_MB as the provider pool's heap budget in bytes (unset: the registry's default)", () => {
    expect(parseConfig({ OIDC_PROVIDER_POOL_MB: "128" }).providerPoolBytes).toBe(128 * 1024 * 1024);
    expect(parseConfig({ OIDC_PROVIDER_POOL_MB: "0.5" }).providerPoolBytes).toBe(512 * 1024);
    expect(parseConfig({}).providerPoolBytes).toBeUndefined();
    expect(parseConfig({ DOCUMENT_DIRECTORY_MB: "96" }).documentDirectoryBytes).toBe(96 * 1024 * 1024);
    expect(parseConfig({}).documentDirectoryBytes).toBeUndefined();
  });

  it("accepts admin@localhost as the bootstrap email (the one email rule)", () => {
    expect(parseConfig({ ADMIN_BOOTSTRAP_EMAIL: "Admin@LocalHost" }).adminBootstrap.email).toBe("admin@localhost");
  });

  it("derives BASE_URL from PORT and drops a trailing slash from an explicit one", () => {
    expect(parseConfig({ PORT: "8080" }).baseUrl).toBe("http://localhost:8080");
    expect(parseConfig({ BASE_URL: "https://id.example.com/" }).baseUrl).toBe("https://id.example.com");
  });

  it("treats empty variables as unset", () => {
    const config = parseConfig({ PORT: "", DATABASE_URL: "", REDIS_URL: " ", ENCRYPTION_KEY: "", SMTP_HOST: "", SMTP_PORT: "" });
    expect(config.port).toBe(3000);
    expect(config.baseUrl).toBe("http://localhost:3000");
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.encryptionKey).toBeUndefined();
    expect(config.smtp).toMatchObject({ host: undefined, port: 587 });
  });

  it("reads every variable when all are valid", () => {
    const key = randomBytes(32);
    const config = parseConfig({
      NODE_ENV: "production",
      PORT: "4000",
      BASE_URL: "https://id.example.com",
      DATABASE_URL: "postgresql://porta:secret@db.internal:5432/porta",
      REDIS_URL: "rediss://cache.internal:6380",
      DATA_DIR: "/var/lib/porta",
      SUPER_ADMIN_SLUG: "Root-Admin",
      ADMIN_BOOTSTRAP_EMAIL: "ops@example.com",
      ADMIN_BOOTSTRAP_PASSWORD: "long enough password",
      ENCRYPTION_KEY: key.toString("base64"),
      SMTP_HOST: "smtp.example.com",
      SMTP_PORT: "2525",
      SMTP_USER: "mailer",
      SMTP_PASS: "mail-secret",
      SMTP_FROM: "Porta <no-reply@example.com>",
      LOG_LEVEL: "debug",
    });
    expect(config).toMatchObject({
      nodeEnv: "production",
      port: 4000,
      baseUrl: "https://id.example.com",
      databaseUrl: "postgresql://porta:secret@db.internal:5432/porta",
      redisUrl: "rediss://cache.internal:6380",
      dataDir: "/var/lib/porta",
      superAdminSlug: "root-admin",
      adminBootstrap: { email: "ops@example.com", password: "long enough password" },
      smtp: { host: "smtp.example.com", port: 2525, user: "mailer", pass: "mail-secret", from: "Porta <no-reply@example.com>" },
      logLevel: "debug",
    });
    expect(config.encryptionKey?.equals(key)).toBe(true);
  });

  const badValues: Array<{ env: Record<string, string>; variable: string; expected: RegExp }> = [
    { env: { PORT: "abc" }, variable: "PORT", expected: /expected a port number between 0 and 65535/ },
    { env: { PORT: "70000" }, variable: "PORT", expected: /expected a port number between 0 and 65535/ },
    { env: { PORT: "80.5" }, variable: "PORT", expected: /expected a port number/ },
    { env: { BASE_URL: "ftp://x" }, variable: "BASE_URL", expected: /expected an absolute http\(s\) URL/ },
    { env: { BASE_URL: "https://id.example.com/porta" }, variable: "BASE_URL", expected: /expected an origin without a path/ },
    { env: { BASE_URL: "https://id.example.com?x=1" }, variable: "BASE_URL", expected: /without query or fragment/ },
    { env: { DATABASE_URL: "not-a-url" }, variable: "DATABASE_URL", expected: /expected a PostgreSQL URL such as postgresql:\/\// },
    { env: { DATABASE_URL: "mysql://porta@db:3306/porta" }, variable: "DATABASE_URL", expected: /expected a PostgreSQL URL/ },
    { env: { REDIS_URL: "http://x" }, variable: "REDIS_URL", expected: /expected a Redis URL such as redis:\/\// },
    { env: { SUPER_ADMIN_SLUG: "Bad Slug!" }, variable: "SUPER_ADMIN_SLUG", expected: /expected a slug/ },
    { env: { ADMIN_BOOTSTRAP_EMAIL: "nope" }, variable: "ADMIN_BOOTSTRAP_EMAIL", expected: /expected an email address/ },
    { env: { ADMIN_BOOTSTRAP_PASSWORD: "short" }, variable: "ADMIN_BOOTSTRAP_PASSWORD", expected: /expected at least 8 characters/ },
    {
      env: { ENCRYPTION_KEY: randomBytes(16).toString("base64") },
      variable: "ENCRYPTION_KEY",
      expected: /expected 32 random bytes in base64/,
    },
    { env: { ENCRYPTION_KEY: "not base64 at all!" }, variable: "ENCRYPTION_KEY", expected: /expected 32 random bytes in base64/ },
    { env: { LOG_LEVEL: "loud" }, variable: "LOG_LEVEL", expected: /expected one of fatal, error, warn, info, debug, trace, silent/ },
    { env: { SMTP_HOST: "smtp.example.com" }, variable: "SMTP_FROM", expected: /expected a sender address .* when SMTP_HOST is set/ },
    { env: { SMTP_PORT: "0" }, variable: "SMTP_PORT", expected: /expected a port number/ },
    { env: { TRUST_PROXY: "true" }, variable: "TRUST_PROXY", expected: /expected a hop count .* or a comma-separated list/ },
    { env: { TRUST_PROXY: "10.0.0.0/33" }, variable: "TRUST_PROXY", expected: /10\.0\.0\.0\/33 is not an IP address, CIDR range/ },
    { env: { TRUST_PROXY: "proxy.internal" }, variable: "TRUST_PROXY", expected: /proxy\.internal is not an IP address/ },
    { env: { TRUST_PROXY: "-1" }, variable: "TRUST_PROXY", expected: /expected a hop count/ },
    { env: { OIDC_PROVIDER_POOL_MB: "0" }, variable: "OIDC_PROVIDER_POOL_MB", expected: /expected a number of megabytes/ },
    { env: { OIDC_PROVIDER_POOL_MB: "lots" }, variable: "OIDC_PROVIDER_POOL_MB", expected: /expected a number of megabytes/ },
    { env: { DOCUMENT_DIRECTORY_MB: "-1" }, variable: "DOCUMENT_DIRECTORY_MB", expected: /expected a number of megabytes/ },
    { env: { SHUTDOWN_DELAY_SECONDS: "-1" }, variable: "SHUTDOWN_DELAY_SECONDS", expected: /expected a number of seconds between 0 and 120/ },
    { env: { SHUTDOWN_DELAY_SECONDS: "121" }, variable: "SHUTDOWN_DELAY_SECONDS", expected: /expected a number of seconds between 0 and 120/ },
    { env: { METRICS_PORT: "3000" }, variable: "METRICS_PORT", expected: /expected a port other than PORT/ },
    { env: { METRICS_PORT: "70000" }, variable: "METRICS_PORT", expected: /expected a port number/ },
    { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, variable: "OTEL_EXPORTER_OTLP_ENDPOINT", expected: /expected an OTLP\/HTTP collector URL/ },
    { env: { METRICS_TOKEN: "short" }, variable: "METRICS_TOKEN", expected: /expected at least 32 characters/ },
  ];

  it.each(badValues)("rejects $env with a ConfigError naming $variable", ({ env, variable, expected }) => {
    const error = configErrorOf(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message).toMatch(expected);
  });

  it("never echoes a secret value in its error", () => {
    const error = configErrorOf({ ENCRYPTION_KEY: "c2VjcmV0LXZhbHVlLXRoYXQtaXMtdG9vLXNob3J0" });
    expect(error.message).not.toContain("c2VjcmV0LXZhbHVlLXRoYXQtaXMtdG9vLXNob3J0");
  });
});
