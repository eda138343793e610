import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { captureLogs } from "../../../test/support/logs";
import { startSmtpSink, type SmtpSink } from "../../../test/support/smtp-sink";
import { parseConfig } from "../config/env";
import { createLogger } from "../logging/logger";
import { isEmailAddress } from "~/schemas/email";
import { InvalidRecipientError, SMTP_TIMEOUTS, createMailer, sanitizeHeaderText, type Mailer } from "./mailer";
import { OUTBOX_LIMIT, listOutboxMessages, outboxDir, readOutboxMessage } from "./outbox";

const LINK = "https://id.example.com/interaction/abc/magic-link/verify?org=acme&token=s3cr3t-t0ken";
const message = (overrides: Partial<{ to: string; subject: string; html: string; text: string }> = {}) => ({
  to: "ada@example.com",
  subject: "Your sign-in link for Acme",
  html: `<p>Hello</p><p><a href="${LINK.replace(/&/g, "&amp;")}">Sign in</a></p>`,
  text: `Hello\n\nSign in: ${LINK}\n`,
  ...overrides,
});


function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "porta-mail-"));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function smtpMailer(port: number, env: Record<string, string> = {}) {
  const logs = captureLogs();
  const config = parseConfig({
    DATA_DIR: tempDir(),
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(port),
    SMTP_FROM: "Porta <no-reply@porta.test>",
    ...env,
  });
  return { mailer: createMailer(config, createLogger("info", logs.stream)), logs };
}

describe("SMTP mailer against a real SMTP peer", () => {
  let sink: SmtpSink;
  let mailer: Mailer;
  let logs: ReturnType<typeof captureLogs>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    ({ mailer, logs } = smtpMailer(sink.port));
  });
  afterAll(async () => {
    mailer?.close();
    await sink?.close();
  });
  afterEach(() => {
    sink.received.length = 0;
  });

  it("is the smtp kind when SMTP_HOST is set", () => {
    expect(mailer.kind).toBe("smtp");
  });

  it("delivers subject, sender, recipient, HTML and text", async () => {
    const { messageId } = await mailer.send(message());
    const [mail] = await sink.waitFor(1);
    expect(mail!.envelope).toEqual({ from: "no-reply@porta.test", to: ["ada@example.com"] });
    expect(mail!.parsed.subject).toBe("Your sign-in link for Acme");
    expect(mail!.parsed.from?.value).toEqual([{ address: "no-reply@porta.test", name: "Porta" }]);
    const to = Array.isArray(mail!.parsed.to) ? mail!.parsed.to : [mail!.parsed.to];
    expect(to.flatMap((t) => t?.value ?? []).map((a) => a.address)).toEqual(["ada@example.com"]);
    expect(mail!.parsed.html).toContain(`href="${LINK.replace(/&/g, "&amp;")}"`);
    expect(mail!.parsed.text).toContain(LINK);
    expect(mail!.parsed.messageId).toBe(messageId);
  });

  it("logs one line per message with the message id and the recipient's domain only", async () => {
    logs.lines.length = 0;
    const { messageId } = await mailer.send(message({ to: "grace.hopper@navy.example" }));
    const sent = logs.lines.filter((l) => l.msg === "mail sent");
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ messageId, recipientDomain: "navy.example", transport: "smtp" });
    const text = logs.text();
    expect(text).not.toContain("grace.hopper");
    expect(text).not.toContain("s3cr3t-t0ken");
    expect(text).not.toContain("Hello");
  });

  it("neutralises header injection in the subject", async () => {
    await mailer.send(message({ subject: "Hello\r\nBcc: eve@evil.test\r\nX-Injected: yes\n\n<p>body</p>\u0000\u2028end" }));
    const [mail] = await sink.waitFor(1);
    expect(mail!.envelope.to).toEqual(["ada@example.com"]);
    expect(mail!.parsed.subject).toBe("Hello Bcc: eve@evil.test X-Injected: yes <p>body</p> end");
    expect(mail!.parsed.bcc).toBeUndefined();
    expect(mail!.parsed.headers.has("x-injected")).toBe(false);
    const headerBlock = mail!.raw.split("\r\n\r\n")[0]!;
    expect(headerBlock).not.toMatch(/^(bcc|x-injected):/im);
    expect(mail!.parsed.text).toContain(LINK);
  });

  it.each([
    ["a second header line", "ada@example.com\r\nBcc: eve@evil.test"],
    ["a bare line feed", "ada@example.com\nBcc: eve@evil.test"],
    ["a trailing newline", "ada@example.com\n"],
    ["a list", "ada@example.com, eve@evil.test"],
    ["a semicolon list", "ada@example.com;eve@evil.test"],
    ["a display name", "Ada <ada@example.com>"],
    ["a group", "friends: ada@example.com;"],
    ["a quoted local part", '"ada lovelace"@example.com'],
    ["two @", "ada@eve@example.com"],
    ["no domain", "ada@"],
    ["no local part", "@example.com"],
    ["no @", "ada.example.com"],
    ["an empty string", ""],
    ["surrounding spaces", " ada@example.com "],
  ])("refuses %s as recipient before connecting", async (_label, to) => {
    const error = await mailer.send(message({ to })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRecipientError);
    expect(error).toMatchObject({ permanent: true });
    expect(sink.received).toHaveLength(0);
  });

  it("accepts plain addresses, single-label and international domains", () => {
    for (const address of ["admin@localhost", "a.b+tag@mail.example.co", "o'neil@example.com", "jürgen@bücher.example"]) {
      expect(isEmailAddress(address), address).toBe(address !== "jürgen@bücher.example");
    }
    expect(isEmailAddress("juergen@bücher.example")).toBe(true);
  });

  it("strips control characters from header text", () => {
    expect(sanitizeHeaderText("a\r\nb\tc\u0007d\u0085e\u2029f  g ")).toBe("a b c d e f g");
  });
});

describe("SMTP mailer when the peer refuses or is unreachable", () => {
  it("rejects when the peer refuses the recipient (550), marked permanent", async () => {
    const sink = await startSmtpSink({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error("no such user here"), { responseCode: 550 }));
      },
    });
    const { mailer, logs } = smtpMailer(sink.port);
    try {
      const error = await mailer.send(message()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ code: "EENVELOPE", responseCode: 550, permanent: true });
      expect(sink.received).toHaveLength(0);
      const failed = logs.lines.filter((l) => l.msg === "mail not sent");
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ recipientDomain: "example.com", responseCode: 550 });
      expect(logs.text()).not.toContain("ada@");
      expect(logs.lines.filter((l) => l.msg === "mail sent")).toHaveLength(0);
    } finally {
      mailer.close();
      await sink.close();
    }
  });

  it("rejects when the peer refuses the message data, transient for a 4xx answer", async () => {
    const sink = await startSmtpSink({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("try again later"), { responseCode: 451 })));
      },
    });
    const { mailer } = smtpMailer(sink.port);
    try {
      const error = await mailer.send(message()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ code: "EMESSAGE", responseCode: 451, permanent: false });
    } finally {
      mailer.close();
      await sink.close();
    }
  });

  it("rejects when the peer refuses the message data with 554", async () => {
    const sink = await startSmtpSink({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("message refused"), { responseCode: 554 })));
      },
    });
    const { mailer } = smtpMailer(sink.port);
    try {
      await expect(mailer.send(message())).rejects.toMatchObject({ responseCode: 554, permanent: true });
    } finally {
      mailer.close();
      await sink.close();
    }
  });

  it("rejects at once when nothing listens on the port", async () => {
    const { mailer } = smtpMailer(await freePort());
    const started = Date.now();
    await expect(mailer.send(message())).rejects.toMatchObject({ code: "ESOCKET" });
    expect(Date.now() - started).toBeLessThan(5_000);
    mailer.close();
  });

  it("rejects within the greeting timeout when the peer never greets", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const { mailer } = smtpMailer(port);
    const started = Date.now();
    try {
      await expect(mailer.send(message())).rejects.toMatchObject({ code: "ETIMEDOUT" });
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(SMTP_TIMEOUTS.greetingTimeout - 500);
      expect(elapsed).toBeLessThan(SMTP_TIMEOUTS.greetingTimeout + 5_000);
    } finally {
      mailer.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 30_000);
});

describe("STARTTLS", () => {
  it("uses STARTTLS when the peer offers it: an untrusted certificate stops the send, no plaintext fallback", async () => {
    // smtp-server offers STARTTLS with its bundled self-signed certificate, which no system trusts.
    let delivered = 0;
    const server = new SMTPServer({
      authOptional: true,
      logger: false,
      onData(stream, _session, callback) {
        delivered += 1;
        stream.resume();
        stream.on("end", () => callback());
      },
    });
    server.on("error", () => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const { port } = server.server.address() as { port: number };
    const { mailer } = smtpMailer(port);
    try {
      const error = await mailer.send(message()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).toMatch(/certificate/i);
      expect(delivered).toBe(0);
    } finally {
      mailer.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("SMTP authentication", () => {
  it("logs in with SMTP_USER and SMTP_PASS when both are given", async () => {
    const logins: Array<{ username: string | undefined; password: string | undefined }> = [];
    const sink = await startSmtpSink({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        logins.push({ username: auth.username, password: auth.password ?? undefined });
        callback(null, { user: auth.username });
      },
    });
    const { mailer } = smtpMailer(sink.port, { SMTP_USER: "mailer", SMTP_PASS: "hunter2-long" });
    try {
      await mailer.send(message());
      await sink.waitFor(1);
      expect(logins).toEqual([{ username: "mailer", password: "hunter2-long" }]);
    } finally {
      mailer.close();
      await sink.close();
    }
  });

  it("does not try to log in without credentials", async () => {
    let attempts = 0;
    const sink = await startSmtpSink({
      allowInsecureAuth: true,
      onAuth(_auth, _session, callback) {
        attempts += 1;
        callback(new Error("no"));
      },
    });
    const { mailer } = smtpMailer(sink.port);
    try {
      await mailer.send(message());
      await sink.waitFor(1);
      expect(attempts).toBe(0);
    } finally {
      mailer.close();
      await sink.close();
    }
  });
});

describe("dev outbox mailer (no SMTP_HOST)", () => {
  function outboxMailer() {
    const dataDir = tempDir();
    const logs = captureLogs();
    const mailer = createMailer(parseConfig({ DATA_DIR: dataDir }), createLogger("info", logs.stream));
    return { mailer, dir: outboxDir(dataDir), logs };
  }

  it("writes one JSON file per message, mode 0600, in a 0700 folder", async () => {
    const { mailer, dir, logs } = outboxMailer();
    expect(mailer.kind).toBe("outbox");
    const { messageId } = await mailer.send(message({ subject: "Line one\r\nBcc: eve@evil.test" }));
    const files = readdirSync(dir);
    expect(files).toEqual([`${messageId}.json`]);
    const file = path.join(dir, files[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(stored).toEqual({
      id: messageId,
      to: "ada@example.com",
      subject: "Line one Bcc: eve@evil.test",
      html: message().html,
      text: message().text,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(await readOutboxMessage(dir, messageId)).toMatchObject({ id: messageId, text: message().text });
    expect(logs.lines.filter((l) => l.msg === "mail sent")).toEqual([
      expect.objectContaining({ messageId, recipientDomain: "example.com", transport: "outbox" }),
    ]);
    expect(logs.text()).not.toContain("s3cr3t-t0ken");
    expect(logs.text()).not.toContain("ada@");
  });

  it("refuses a recipient that is not one plain address and writes nothing", async () => {
    const { mailer, dir } = outboxMailer();
    await expect(mailer.send(message({ to: "ada@example.com\r\nBcc: eve@evil.test" }))).rejects.toBeInstanceOf(InvalidRecipientError);
    expect(await listOutboxMessages(dir)).toEqual([]);
  });

  it(`keeps only the newest ${OUTBOX_LIMIT} messages`, async () => {
    const { mailer, dir } = outboxMailer();
    const ids: string[] = [];
    for (let i = 0; i < OUTBOX_LIMIT + 5; i++) {
      ids.push((await mailer.send(message({ subject: `Message ${i}` }))).messageId);
    }
    const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    expect(files).toHaveLength(OUTBOX_LIMIT);
    const listed = await listOutboxMessages(dir);
    expect(listed).toHaveLength(OUTBOX_LIMIT);
    expect(listed[0]!.subject).toBe(`Message ${OUTBOX_LIMIT + 4}`);
    expect(listed.at(-1)!.subject).toBe("Message 5");
    for (const gone of ids.slice(0, 5)) expect(await readOutboxMessage(dir, gone)).toBeNull();
    expect(readdirSync(dir).filter((f) => !f.endsWith(".json"))).toEqual([]);
  }, 60_000);

  it("never reads outside the folder for a crafted id", async () => {
    const { dir } = outboxMailer();
    expect(await readOutboxMessage(dir, "../../etc/passwd")).toBeNull();
    expect(await readOutboxMessage(dir, "..")).toBeNull();
  });
});
