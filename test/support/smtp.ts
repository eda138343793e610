import { type AddressInfo } from "node:net";
import { simpleParser, type AddressObject, type ParsedMail } from "mailparser";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";

/**
 * A real SMTP peer for the mail tests: smtp-server on a free loopback port, without TLS or
 * authentication, that parses every message with mailparser. Its behaviour can be switched at
 * any time, so a test can make it refuse (a temporary 451, at RCPT TO or after the message
 * data), hold messages unanswered until released, or accept.
 */

export interface PeerMail {
  /** SMTP envelope as the peer saw it (MAIL FROM / RCPT TO). */
  envelope: { from: string | null; to: string[] };
  parsed: ParsedMail;
  raw: string;
  subject: string;
  text: string;
  html: string;
  /** Addresses of the To header. */
  to: string[];
  receivedAt: number;
}

/**
 * accept: 250 after the message. refuse: 451 temporary failure (at RCPT TO or after DATA, see
 * `refuseAt`). hold: the message is read but never answered until `release`.
 */
export type PeerMode = "accept" | "refuse" | "hold";

export interface SmtpPeer {
  host: string;
  port: number;
  /** The environment that points a Porta at this peer. */
  env: { SMTP_HOST: string; SMTP_PORT: string; SMTP_FROM: string };
  /** Messages the peer accepted (answered 250). */
  received: PeerMail[];
  /** Messages whose data arrived but which the peer refused afterwards (partly delivered). */
  refused: PeerMail[];
  /** Recipients refused at RCPT TO. */
  refusedRecipients: string[];
  /** Messages read and not answered yet (mode "hold"). */
  readonly held: number;
  mode: PeerMode;
  /** Where "refuse" answers: at RCPT TO (nothing transmitted) or after the data. */
  refuseAt: "rcpt" | "data";
  /** Extra wait before a 250, to make deliveries take time. */
  acceptDelayMs: number;
  /** Answers every held message: accept (it counts as received) or refuse (451). */
  release(outcome: "accept" | "refuse"): void;
  /** Accepted messages to one address. */
  mailsTo(address: string): PeerMail[];
  /** Waits until the condition on the peer holds. */
  waitUntil(condition: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Waits for the `count`-th accepted message to `address` and returns it. */
  waitForMail(address: string, options?: { count?: number; timeoutMs?: number }): Promise<PeerMail>;
  close(): Promise<void>;
}

export const SMTP_FROM = "Porta <no-reply@porta.test>";

const temporaryFailure = (message: string) => Object.assign(new Error(message), { responseCode: 451 });

function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((a) => a.value.map((v) => (v.address ?? "").toLowerCase()));
}

/** `port`: listen on this one (a peer brought back up where an earlier one was closed). */
export async function startSmtpPeer(options: { mode?: PeerMode; refuseAt?: "rcpt" | "data"; port?: number } = {}): Promise<SmtpPeer> {
  const received: PeerMail[] = [];
  const refused: PeerMail[] = [];
  const refusedRecipients: string[] = [];
  const held: Array<{ mail: PeerMail; callback: (error?: Error | null) => void }> = [];
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const wake of listeners) wake();
  };

  async function read(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<PeerMail> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const parsed = await simpleParser(raw);
    return {
      envelope: {
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
      },
      parsed,
      raw: raw.toString("utf8"),
      subject: parsed.subject ?? "",
      text: parsed.text ?? "",
      html: typeof parsed.html === "string" ? parsed.html : "",
      to: addressesOf(parsed.to),
      receivedAt: Date.now(),
    };
  }

  const accept = (mail: PeerMail, callback: (error?: Error | null) => void) => {
    const done = () => {
      received.push(mail);
      callback();
      changed();
    };
    if (peer.acceptDelayMs > 0) setTimeout(done, peer.acceptDelayMs);
    else done();
  };
  const refuse = (mail: PeerMail, callback: (error?: Error | null) => void) => {
    refused.push(mail);
    callback(temporaryFailure("temporary failure, try again later"));
    changed();
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    closeTimeout: 1_000,
    onRcptTo(address, _session, callback) {
      if (peer.mode === "refuse" && peer.refuseAt === "rcpt") {
        refusedRecipients.push(address.address.toLowerCase());
        callback(temporaryFailure("mailbox temporarily unavailable"));
        changed();
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      read(stream, session).then(
        (mail) => {
          if (peer.mode === "hold") {
            held.push({ mail, callback });
            changed();
          } else if (peer.mode === "refuse") refuse(mail, callback);
          else accept(mail, callback);
        },
        (error: Error) => callback(error),
      );
    },
  });
  server.on("error", () => {
    // A client that goes away mid-session surfaces here; tests assert on what arrived instead.
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  const peer: SmtpPeer = {
    host: "127.0.0.1",
    port,
    env: { SMTP_HOST: "127.0.0.1", SMTP_PORT: String(port), SMTP_FROM },
    received,
    refused,
    refusedRecipients,
    get held() {
      return held.length;
    },
    mode: options.mode ?? "accept",
    refuseAt: options.refuseAt ?? "data",
    acceptDelayMs: 0,
    release(outcome) {
      for (const { mail, callback } of held.splice(0)) {
        if (outcome === "accept") accept(mail, callback);
        else refuse(mail, callback);
      }
    },
    mailsTo(address) {
      const wanted = address.toLowerCase();
      return received.filter((m) => m.envelope.to.includes(wanted));
    },
    async waitUntil(condition, timeoutMs = 15_000, what = "the SMTP peer condition") {
      const deadline = Date.now() + timeoutMs;
      while (!condition()) {
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(`timed out waiting for ${what} (received ${received.length}, refused ${refused.length}, refused recipients ${refusedRecipients.length}, held ${held.length})`);
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            listeners.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.min(left, 250));
          listeners.add(wake);
        });
      }
    },
    async waitForMail(address, { count = 1, timeoutMs = 15_000 } = {}) {
      await peer.waitUntil(() => peer.mailsTo(address).length >= count, timeoutMs, `${count} message(s) to ${address}`);
      return peer.mailsTo(address)[count - 1]!;
    },
    async close() {
      peer.release("refuse");
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return peer;
}

/** The first link in a message's text part that contains `pathPart`. */
export function linkIn(mail: PeerMail, pathPart: string): string {
  const link = mail.text.match(/https?:\/\/[^\s<>"]+/g)?.find((url) => url.includes(pathPart));
  if (!link) throw new Error(`no link with ${pathPart} in the message: ${mail.text}`);
  return link;
}
