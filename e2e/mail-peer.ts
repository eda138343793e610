import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/**
 * The SMTP peer of the end-to-end server: a real smtp-server on a free loopback port (no TLS,
 * no auth) that parses each message and rewrites a JSON mailbox file with everything received,
 * so that a spec can read the emailed codes and links. The seed names the file.
 */
export interface MailboxMessage {
  /** Envelope recipients, lower case. */
  to: string[];
  subject: string;
  text: string;
  receivedAt: number;
}

export interface MailPeer {
  host: string;
  port: number;
  file: string;
  close(): Promise<void>;
}

export async function startMailPeer(file: string): Promise<MailPeer> {
  const messages: MailboxMessage[] = [];
  const save = () => {
    // Written whole, then renamed: a reader never sees half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify(messages, null, 2), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  };
  save();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          messages.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            receivedAt: Date.now(),
          });
          save();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  server.on("error", () => {
    // A client that disconnects early surfaces here; the spec sees what arrived.
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    file,
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          rmSync(file, { force: true });
          resolve();
        }),
      ),
  };
}

/** The messages in a mailbox file (none while it does not exist). */
export function readMailbox(file: string): MailboxMessage[] {
  if (!existsSync(file)) return [];
  return JSON.parse(readFileSync(file, "utf8")) as MailboxMessage[];
}
