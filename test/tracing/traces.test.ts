import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { continueToCallback, createTenant, eventually, openLoginPage, PASSWORD, redeem, requestMagicLinkOn, submitPassword, type Tenant } from "../email/helpers";
import { invalidateOrganization } from "~/.server/directory/organizations";
import { createUser } from "../support/factories";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";

/**
 * OpenTelemetry traces (decision 051) exported over OTLP/HTTP to a receiver
 * in the test. One password sign-in makes a trace per request whose server span carries the
 * request id and holds the database's (and, with Redis, the cache's) spans; a mail is a job span
 * holding a mail span; an incoming traceparent is continued.
 */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}
const SERVER = 2;

let receiver: Server;
let porta: TestPorta;
let tenant: Tenant;
const spans: OtlpSpan[] = [];
const bodies: string[] = [];

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

/** The span's ancestors up to its trace's root, nearest first. */
function ancestors(span: OtlpSpan): OtlpSpan[] {
  const chain: OtlpSpan[] = [];
  let current = span;
  while (current.parentSpanId) {
    const parent = spans.find((s) => s.spanId === current.parentSpanId);
    if (!parent) break;
    chain.push(parent);
    current = parent;
  }
  return chain;
}

beforeAll(async () => {
  const port = await freePort();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      if (req.url === "/v1/traces") {
        const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of parsed.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
  porta = await startTestPorta({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: "porta-test" } });
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("traces", () => {
  it("makes one trace per request of a password sign-in, with the request id and the database's spans inside", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    const page = await openLoginPage(tenant);
    // Each process keeps what it read in its memory (decision 058): forgotten here, the sign-in
    // reads its organization through the cache store again, so that read's spans can be checked.
    await invalidateOrganization(porta.services.cache, tenant.org);
    const posted = await submitPassword(page, user.email, PASSWORD);
    expect(posted.status).toBe(302);
    const requestId = posted.headers.get("x-request-id")!;
    const { callback } = await continueToCallback(page.browser, posted, page.interactionUrl);
    expect((await redeem(page, callback)).access_token).toBeTruthy();
    await porta.services.tracing.flush();

    const login = spans.find((s) => s.kind === SERVER && attribute(s, "porta.request_id") === requestId);
    expect(login).toBeDefined();
    expect(login!.name).toBe("POST /interaction/*");
    expect(login!.parentSpanId ?? "").toBe("");
    expect(attribute(login!, "http.response.status_code")).toBe(302);
    const inside = spans.filter((s) => s.traceId === login!.traceId && s !== login);
    const prisma = inside.filter((s) => s.name.startsWith("prisma:"));
    expect(prisma.length).toBeGreaterThan(2);
    for (const span of prisma) expect(ancestors(span).at(-1)?.spanId).toBe(login!.spanId);
    if (process.env.REDIS_URL) expect(inside.some((s) => s.name.startsWith("redis ") && ancestors(s).at(-1)?.spanId === login!.spanId)).toBe(true);
    const token = spans.find((s) => s.kind === SERVER && s.name === "POST /{slug}/auth/token" && attribute(s, "http.response.status_code") === 200);
    expect(token).toBeDefined();
    // The tokens' rows are written past Prisma (decision 057), in spans of their own inside the request.
    const tokenSql = spans.filter((s) => s.traceId === token!.traceId && s.name === "postgresql INSERT");
    expect(tokenSql.length).toBeGreaterThan(0);
    for (const span of tokenSql) expect(String(attribute(span, "db.query.text"))).toContain('"OidcPayload"');
    expect(bodies.join("")).toContain("porta-test");
    // Nothing secret travels in the spans: no password, no code, no token.
    expect(bodies.join("")).not.toContain(PASSWORD);
    expect(bodies.join("")).not.toContain(callback.searchParams.get("code")!);
  });

  it("makes a job span holding the mail's span when a magic link is sent", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id);
    const page = await openLoginPage(tenant);
    expect((await requestMagicLinkOn(page, user.email)).status).toBeLessThan(400);
    const mail = await eventually(
      async () => {
        await porta.services.tracing.flush();
        return spans.find((s) => s.name === "mail send");
      },
      (span) => span !== undefined,
    );
    expect(ancestors(mail!)[0]?.name).toBe("job magic-link");
  });

  it("continues the trace of an incoming traceparent", async () => {
    const traceId = randomBytes(16).toString("hex");
    const parent = randomBytes(8).toString("hex");
    const res = await fetch(`${tenant.issuer}/.well-known/openid-configuration`, { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    expect(res.status).toBe(200);
    await porta.services.tracing.flush();
    const span = spans.find((s) => s.traceId === traceId);
    expect(span).toMatchObject({ name: "GET /{slug}/.well-known/openid-configuration", parentSpanId: parent });
  });
});
