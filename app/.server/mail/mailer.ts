import type { Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { type Logger } from "pino";
import { isEmailAddress } from "~/schemas/email";
import { type Config } from "../config/env";
import { outboxDir, writeOutboxMessage } from "./outbox";
import { onFirstUse } from "../lazy";

export interface OutgoingMessage {
  to: string;
  subject: string;
  html: string;
  text: string;
}

/**
 * Sends one rendered message. `send` resolves once the SMTP peer accepted the message (or the
 * dev outbox stored it) and rejects otherwise, so the job worker can retry. Rejections from
 * nodemailer carry its `code`, `responseCode` and `permanent` (true for a 5xx refusal).
 */
export interface Mailer {
  readonly kind: "smtp" | "outbox";
  send(message: OutgoingMessage): Promise<{ messageId: string }>;
  /** "degraded" from a failed delivery until the next one succeeds (/health reports it). */
  health(): "ok" | "degraded";
  close(): void;
}

/** The same mailer with its `send` wrapped (metrics, traces), everything else passed through. */
export function wrapSend(mailer: Mailer, send: Mailer["send"]): Mailer {
  return {
    get kind() {
      return mailer.kind;
    },
    health: () => mailer.health(),
    close: () => mailer.close(),
    send,
  };
}

/** A recipient that is not one plain address; retrying cannot help. */
export class InvalidRecipientError extends Error {
  readonly code = "EENVELOPE";
  readonly permanent = true;
  constructor() {
    super("the recipient must be a single plain email address");
    this.name = "InvalidRecipientError";
  }
}

/**
 * Bounded waits, so that an unreachable or silent server fails the job instead of hanging it;
 * the job queue takes a job still running after `expireInSeconds` (30 s) for abandoned.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, dnsTimeout: 10_000, socketTimeout: 10_000 } as const;

/** A header value on one line: control characters (CR, LF, TAB, NUL, C1, line separators) become spaces. */
export function sanitizeHeaderText(value: string): string {
  let line = "";
  for (const char of value) {
    const code = char.codePointAt(0)!;
    const control = code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
    line += control ? " " : char;
  }
  return line.replace(/ {2,}/g, " ").trim();
}

function recipientDomain(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}

/** Checks and normalizes a message before either transport sees it. */
function prepare(message: OutgoingMessage): OutgoingMessage {
  const { to } = message;
  if (!isEmailAddress(to)) throw new InvalidRecipientError();
  return { to, subject: sanitizeHeaderText(message.subject), html: message.html, text: message.text };
}

function errorFields(error: unknown): Record<string, unknown> {
  const e = error as { code?: unknown; responseCode?: unknown; permanent?: unknown; timeoutType?: unknown };
  // Deliberately not the server's response text: it may quote the full address.
  return { code: e.code, responseCode: e.responseCode, permanent: e.permanent, timeoutType: e.timeoutType };
}

/** The outcome of the last delivery attempt; a recipient refused before any sending does not count. */
function deliveryHealth() {
  let failing = false;
  return {
    async track<T>(delivery: Promise<T>): Promise<T> {
      try {
        const result = await delivery;
        failing = false;
        return result;
      } catch (error) {
        failing = true;
        throw error;
      }
    },
    health: () => (failing ? ("degraded" as const) : ("ok" as const)),
  };
}

function createSmtpMailer(config: Config, logger: Logger): Mailer {
  const state = deliveryHealth();
  const { host, port, user, pass, from } = config.smtp;
  const transportOptions: SMTPTransport.Options = {
    host,
    port,
    // Implicit TLS on 465; elsewhere STARTTLS whenever the server offers it (nodemailer's default).
    secure: port === 465,
    auth: user && pass ? { user, pass } : undefined,
    ...SMTP_TIMEOUTS,
    // Message content is always strings; never let a value be read as a file path or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  // nodemailer is loaded by the first message, not at start: most servers send mail rarely (decision 056).
  let opened: Transporter | undefined;
  const connect = onFirstUse(() => import("nodemailer").then(({ default: nodemailer }) => (opened = nodemailer.createTransport(transportOptions))));
  return {
    kind: "smtp",
    async send(input) {
      const message = prepare(input);
      const domain = recipientDomain(message.to);
      try {
        const info = await state.track(connect().then((smtp) => smtp.sendMail({ from, to: message.to, subject: message.subject, html: message.html, text: message.text })));
        logger.info({ messageId: info.messageId, recipientDomain: domain, transport: "smtp" }, "mail sent");
        return { messageId: info.messageId };
      } catch (error) {
        logger.warn({ recipientDomain: domain, transport: "smtp", ...errorFields(error) }, "mail not sent");
        throw error;
      }
    },
    health: state.health,
    close() {
      opened?.close();
    },
  };
}

function createOutboxMailer(config: Config, logger: Logger): Mailer {
  const dir = outboxDir(config.dataDir);
  const state = deliveryHealth();
  logger.info({ outbox: dir }, "SMTP_HOST is unset: mail is written to the dev outbox (see /dev/outbox)");
  return {
    kind: "outbox",
    async send(input) {
      const message = prepare(input);
      const stored = await state.track(writeOutboxMessage(dir, message));
      logger.info({ messageId: stored.id, recipientDomain: recipientDomain(message.to), transport: "outbox" }, "mail sent");
      return { messageId: stored.id };
    },
    health: state.health,
    close() {},
  };
}

/** SMTP when SMTP_HOST is set, otherwise the development outbox in `$DATA_DIR/outbox`. */
export function createMailer(config: Config, logger: Logger): Mailer {
  return config.smtp.host ? createSmtpMailer(config, logger) : createOutboxMailer(config, logger);
}
