import { type AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export interface ReceivedMail {
  /** SMTP envelope as the server saw it (MAIL FROM / RCPT TO). */
  envelope: { from: string | null; to: string[] };
  /** The message as mailparser's simpleParser reads it. */
  parsed: ParsedMail;
  /** The raw message, headers included. */
  raw: string;
}

export interface SmtpSink {
  host: string;
  port: number;
  received: ReceivedMail[];
  /** Resolves with the next message (or an already received one beyond `count`). */
  waitFor(count?: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP peer on a free loopback port (smtp-server, no TLS, any or no auth) that parses
 * what it receives. `options` may add hooks such as onRcptTo to refuse recipients.
 */
export async function startSmtpSink(options: Partial<SMTPServerOptions> = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            received.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              parsed,
              raw: raw.toString("utf8"),
            });
            callback();
            for (const wake of waiters.splice(0)) wake();
          },
          (error: Error) => callback(error),
        );
      });
    },
    ...options,
  });
  server.on("error", () => {
    // Client disconnects surface here; a test asserts on what it received instead.
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    received,
    async waitFor(count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} message(s) at the SMTP sink, got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
