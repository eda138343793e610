import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderEmail } from "~/.server/mail/render";
import { startSmtpSink, type SmtpSink } from "./support/smtp-sink";
import { startTestPorta, type TestPorta } from "./support/porta";

const LINK = "https://id.example.com/interaction/uid-1/magic-link/verify?org=acme&token=outbox-token-123";
const escapeHtml = (value: string) => value.replace(/&/g, "&amp;");
const branding = { name: "Acme", logoUrl: null, cssVariables: {} };
const REMOTE = { "X-Forwarded-For": "203.0.113.7" };

describe("dev outbox without SMTP_HOST", () => {
  let porta: TestPorta;
  let id: string;
  beforeAll(async () => {
    porta = await startTestPorta();
    const email = await renderEmail({ kind: "magic-link", link: LINK, expiresMinutes: 15 }, { language: "en", branding, organizationName: "Acme" });
    ({ messageId: id } = await porta.services.mailer.send({ to: "ada@example.com", ...email }));
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("uses the outbox mailer", () => {
    expect(porta.services.mailer.kind).toBe("outbox");
  });

  it("lists the sent message at /dev/outbox", async () => {
    const res = await fetch(`${porta.url}/dev/outbox`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain("Your sign-in link for Acme");
    expect(html).toContain("ada@example.com");
    expect(html).toContain(`href="/dev/outbox/${id}"`);
  });

  it("shows one message with its HTML in a sandboxed frame and a clickable link in its text", async () => {
    const res = await fetch(`${porta.url}/dev/outbox/${id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toContain("Your sign-in link for Acme");
    expect(html).toMatch(/<iframe[^>]*sandbox="allow-popups allow-popups-to-escape-sandbox"[^>]*srcDoc="/i);
    // The text part: the address as a link that opens in a new tab.
    expect(html).toContain(`<a href="${escapeHtml(LINK)}" target="_blank" rel="noreferrer noopener">${escapeHtml(LINK)}</a>`);
  });

  it("links to the outbox from the start page", async () => {
    const html = await (await fetch(`${porta.url}/`)).text();
    expect(html).toContain('href="/dev/outbox"');
  });

  it("answers 404 for an unknown or crafted message id", async () => {
    expect((await fetch(`${porta.url}/dev/outbox/000000000000000-000000-000000000000`)).status).toBe(404);
    expect((await fetch(`${porta.url}/dev/outbox/..%2F..%2Fencryption.key`)).status).toBe(404);
  });

  it("answers 404 to a client that is not on this machine, even through a local proxy", async () => {
    expect((await fetch(`${porta.url}/dev/outbox`, { headers: REMOTE })).status).toBe(404);
    const detail = await fetch(`${porta.url}/dev/outbox/${id}`, { headers: REMOTE });
    expect(detail.status).toBe(404);
    expect(await detail.text()).not.toContain("outbox-token-123");
    expect(await (await fetch(`${porta.url}/`, { headers: REMOTE })).text()).not.toContain('href="/dev/outbox"');
  });
});

describe("dev outbox with SMTP_HOST set", () => {
  let sink: SmtpSink;
  let porta: TestPorta;
  beforeAll(async () => {
    sink = await startSmtpSink();
    porta = await startTestPorta({
      env: { SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" },
    });
  });
  afterAll(async () => {
    await porta?.stop();
    await sink?.close();
  });

  it("sends through SMTP instead", async () => {
    expect(porta.services.mailer.kind).toBe("smtp");
    await porta.services.mailer.send({ to: "ada@example.com", subject: "Hello", html: `<a href="${escapeHtml(LINK)}">x</a>`, text: LINK });
    const [mail] = await sink.waitFor(1);
    expect(mail!.parsed.subject).toBe("Hello");
    expect(mail!.parsed.text).toContain(LINK);
  });

  it("answers 404 at /dev/outbox and its message pages, even from this machine", async () => {
    expect((await fetch(`${porta.url}/dev/outbox`)).status).toBe(404);
    expect((await fetch(`${porta.url}/dev/outbox/000000000000000-000000-000000000000`)).status).toBe(404);
  });

  it("does not link to the outbox from the start page", async () => {
    const res = await fetch(`${porta.url}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).not.toContain("/dev/outbox");
  });
});
