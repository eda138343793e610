import type * as WebAuthn from "@simplewebauthn/server";
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { z } from "zod";
import type { Passkey } from "~/generated/prisma/client";
import { userActor, type RequestMeta } from "../auth/actors";
import type { Context, Db, StagedContext } from "../context";
import { onFirstUse } from "../lazy";
import { textNestsDeeperThan } from "~/schemas/json-depth";

/**
 * The key algorithms a passkey may use: EdDSA, ES256, RS256 (COSE ids). Named, not left to the
 * library, which would also offer and accept ML-DSA-44 where the runtime has it: on Node 24 only
 * behind an experimental Web Crypto algorithm, whose probe prints a warning to the operator's
 * terminal at the first registration.
 */
const PASSKEY_ALGORITHMS = [-8, -7, -257];

/**
 * Passkeys (WebAuthn, decision 041) on top of @simplewebauthn/server: the options a browser
 * needs to create or use a credential, and the checks of what it sends back. Porta's own rules
 * live here, not in the library:
 *   - the relying party is BASE_URL: its host is the RP ID, its origin the only origin accepted;
 *   - every challenge is stored on the server for a few minutes under what it is bound to (the
 *     interaction, or the account page's browser session) and taken (read and deleted in one
 *     step) by the check, so it answers once, and only there;
 *   - user verification is required (a passkey is a complete proof, decision 041), attestation
 *     is `none` (no authenticator allow-list; the AAGUID is kept when the authenticator says);
 *   - a credential belongs to one user of one organization, and the signature counter may only
 *     grow (written with a compare-and-set, so two uses of one assertion never both pass).
 */

/** The WebAuthn library loads with the first ceremony: its ASN.1 and COSE code costs ~0.3 CPU-s and ~20 MB at start (decision 056). */
const webauthn = onFirstUse((): Promise<typeof WebAuthn> => import("@simplewebauthn/server"));

export const MAX_PASSKEYS_PER_USER = 10;
export const PASSKEY_NAME_MAX = 64;
const CHALLENGE_TTL_SECONDS = 5 * 60;
const ZERO_AAGUID = "00000000-0000-0000-0000-000000000000";

export interface RelyingParty {
  id: string;
  origin: string;
}

/** The RP ID and origin of a deployment: both from BASE_URL (a new domain makes earlier passkeys unusable; decision 041). */
export function relyingPartyOf(baseUrl: string): RelyingParty {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin };
}

/** What a challenge answers for: the purpose and the thing it is bound to (an interaction uid, a session). */
export type ChallengeBinding = { purpose: "login" | "second-factor" | "register"; subject: string };

const challengeKey = (b: ChallengeBinding) => `passkey:${b.purpose}:${b.subject}`;

/**
 * What registering and checking a passkey need: the base URL (the relying party), the store (the
 * challenge) and the runner of the one write, which names its actor. The sign-in's steps hand
 * theirs (sign-in/method.ts), the account page its own (account/page.ts).
 */
export type PasskeyContext = StagedContext<"config" | "store">;

async function keepChallenge(ctx: Context<"store">, binding: ChallengeBinding, challenge: string): Promise<void> {
  await ctx.store.set(challengeKey(binding), challenge, CHALLENGE_TTL_SECONDS);
}

/** The challenge issued for this binding, once: a second call (a replayed answer) finds nothing. */
async function takeChallenge(ctx: Context<"store">, binding: ChallengeBinding): Promise<string | null> {
  return ctx.store.take(challengeKey(binding));
}

/** Browsers send the credential as JSON; its shape is checked before the library reads it. */
const Base64Url = z.string().min(1).max(4096).regex(/^[A-Za-z0-9_-]+={0,2}$/);
export const RegistrationResponseSchema = z.object({
  id: Base64Url,
  rawId: Base64Url,
  type: z.literal("public-key"),
  response: z
    .object({ clientDataJSON: Base64Url, attestationObject: Base64Url, transports: z.array(z.string().max(32)).max(8).optional() })
    .passthrough(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(32).optional(),
});
export const AuthenticationResponseSchema = z.object({
  id: Base64Url,
  rawId: Base64Url,
  type: z.literal("public-key"),
  response: z
    .object({ clientDataJSON: Base64Url, authenticatorData: Base64Url, signature: Base64Url, userHandle: Base64Url.optional() })
    .passthrough(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.string().max(32).optional(),
});

/** A credential posted as a form field (JSON text), or null when it is not one. */
export function parseCredential<S extends typeof RegistrationResponseSchema | typeof AuthenticationResponseSchema>(schema: S, text: unknown): z.infer<S> | null {
  if (typeof text !== "string" || text.length > 16_384) return null;
  try {
    // The extension results are passed on as they came: too deep a nesting is no credential.
    if (textNestsDeeperThan(text)) return null;
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data as z.infer<S>) : null;
  } catch {
    return null;
  }
}

/** A user's passkey as pages and the Admin API show it: never the key material. */
export interface PasskeySummary {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** singleDevice | multiDevice (synced) */
  deviceType: string;
  backedUp: boolean;
  aaguid: string | null;
  transports: string[];
}

const toSummary = (p: Passkey): PasskeySummary => ({
  id: p.id,
  name: p.name,
  createdAt: p.createdAt,
  lastUsedAt: p.lastUsedAt,
  deviceType: p.deviceType,
  backedUp: p.backedUp,
  aaguid: p.aaguid,
  transports: p.transports,
});

export async function listPasskeys(db: Db, userId: string): Promise<PasskeySummary[]> {
  const rows = await db.passkey.findMany({ where: { userId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(toSummary);
}

export const countPasskeys = (db: Db, userId: string) => db.passkey.count({ where: { userId } });

// ---------------------------------------------------------------------------------------------
// Registration

export interface PasskeyOwner {
  organization: { id: string; name: string };
  user: { id: string; email: string; givenName: string | null; familyName: string | null };
}

/** The user handle a credential registered here carries: the user's id (UTF-8, base64url). */
const userHandleOf = (userId: string) => Buffer.from(userId, "utf8").toString("base64url");

export type RegistrationStart = { ok: true; options: PublicKeyCredentialCreationOptionsJSON } | { ok: false; reason: "limit" };

/** Options to create a discoverable credential for the user (its user handle is the user's id). */
export async function beginRegistration(ctx: PasskeyContext, owner: PasskeyOwner, binding: ChallengeBinding): Promise<RegistrationStart> {
  const existing = await ctx.db.passkey.findMany({ where: { userId: owner.user.id }, select: { credentialId: true, transports: true } });
  if (existing.length >= MAX_PASSKEYS_PER_USER) return { ok: false, reason: "limit" };
  const rp = relyingPartyOf(ctx.config.baseUrl);
  const displayName = [owner.user.givenName, owner.user.familyName].filter(Boolean).join(" ") || owner.user.email;
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: owner.organization.name,
    rpID: rp.id,
    userName: owner.user.email,
    userID: Buffer.from(userHandleOf(owner.user.id), "base64url"),
    userDisplayName: displayName,
    attestationType: "none",
    // The same authenticator twice would be two names for one key.
    excludeCredentials: existing.map((c) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] })),
    authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
  await keepChallenge(ctx, binding, options.challenge);
  return { ok: true, options };
}

export type RegistrationOutcome = { ok: true; passkey: PasskeySummary } | { ok: false; reason: "invalid" | "limit" | "duplicate" };

/** Checks the browser's answer to the registration options and stores the credential, audited as `account.passkey.added`. */
export async function completeRegistration(
  ctx: PasskeyContext,
  owner: PasskeyOwner,
  binding: ChallengeBinding,
  input: { response: RegistrationResponseJSON; name: string; meta: RequestMeta },
): Promise<RegistrationOutcome> {
  const expectedChallenge = await takeChallenge(ctx, binding);
  if (!expectedChallenge) return { ok: false, reason: "invalid" };
  const rp = relyingPartyOf(ctx.config.baseUrl);
  let info;
  try {
    const verified = await (await webauthn()).verifyRegistrationResponse({
      response: input.response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
    if (!verified.verified) return { ok: false, reason: "invalid" };
    info = verified.registrationInfo;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  const userId = owner.user.id;
  return ctx.transaction(userActor(userId, input.meta), async (ctx) => {
    // Counted in the write (rows of this user locked), so that two tabs cannot pass the limit together.
    await ctx.db.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`;
    if ((await countPasskeys(ctx.db, userId)) >= MAX_PASSKEYS_PER_USER) return { ok: false as const, reason: "limit" as const };
    const taken = await ctx.db.passkey.findUnique({ where: { organizationId_credentialId: { organizationId: owner.organization.id, credentialId: info.credential.id } }, select: { id: true } });
    if (taken) return { ok: false as const, reason: "duplicate" as const };
    const row = await ctx.db.passkey.create({
      data: {
        organizationId: owner.organization.id,
        userId,
        credentialId: info.credential.id,
        userHandle: userHandleOf(userId),
        publicKey: Buffer.from(info.credential.publicKey),
        counter: BigInt(info.credential.counter),
        transports: info.credential.transports ?? [],
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        aaguid: info.aaguid && info.aaguid !== ZERO_AAGUID ? info.aaguid : null,
        name: cleanName(input.name) ?? defaultName(info.credentialDeviceType),
      },
    });
    ctx.audit({
      eventType: "account.passkey.added",
      organizationId: owner.organization.id,
      targetType: "user",
      targetId: userId,
      data: { passkeyId: row.id, name: row.name, deviceType: row.deviceType },
    });
    return { ok: true as const, passkey: toSummary(row) };
  });
}

/** A name as typed (trimmed, control characters out), or null when nothing is left. */
export function cleanName(name: string): string | null {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, PASSKEY_NAME_MAX);
  return cleaned.length > 0 ? cleaned : null;
}

const defaultName = (deviceType: string) => (deviceType === "multiDevice" ? "Synced passkey" : "Passkey");

// ---------------------------------------------------------------------------------------------
// Use: sign-in and second factor

/** Options for an assertion. Without `userId` any discoverable credential of the RP answers (sign-in). */
export async function startAssertion(ctx: PasskeyContext, binding: ChallengeBinding, userId?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const rp = relyingPartyOf(ctx.config.baseUrl);
  const allow = userId
    ? (await ctx.db.passkey.findMany({ where: { userId }, select: { credentialId: true, transports: true } })).map((c) => ({
        id: c.credentialId,
        transports: c.transports as AuthenticatorTransport[],
      }))
    : undefined;
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: "required", ...(allow ? { allowCredentials: allow } : {}) });
  await keepChallenge(ctx, binding, options.challenge);
  return options;
}

/** The RFC 8176 key method of a passkey: a synced (backup-eligible) key is software-held somewhere (decision 041). */
export type PasskeyKind = "hwk" | "swk";
export const passkeyKind = (deviceType: string): PasskeyKind => (deviceType === "multiDevice" ? "swk" : "hwk");

export type AssertionFailure = "no_challenge" | "unknown_credential" | "wrong_user" | "invalid_signature" | "replayed";

/** A verified assertion, and how to record its use: once, in the transaction that signs in. */
export type AssertionClaim =
  | { ok: true; userId: string; passkeyId: string; kind: PasskeyKind; take: (db: Db) => Promise<boolean> }
  | { ok: false; reason: AssertionFailure; userId?: string };

/**
 * Checks an assertion for the organization: the challenge of this binding (taken, so never
 * twice), a credential of this organization (and of `userId` when given), the signature,
 * origin, RP ID and user verification, and a growing counter. Nothing is written here; the
 * claim's `take` records the use with a compare-and-set on the counter.
 */
export async function checkAssertion(
  ctx: PasskeyContext,
  input: { organizationId: string; binding: ChallengeBinding; response: AuthenticationResponseJSON; userId?: string },
): Promise<AssertionClaim> {
  const expectedChallenge = await takeChallenge(ctx, input.binding);
  if (!expectedChallenge) return { ok: false, reason: "no_challenge" };
  const passkey = await ctx.db.passkey.findUnique({
    where: { organizationId_credentialId: { organizationId: input.organizationId, credentialId: input.response.id } },
  });
  if (!passkey) return { ok: false, reason: "unknown_credential" };
  // The user handle the authenticator returns must be the one stored with the credential (WebAuthn §7.2).
  const userHandle = input.response.response.userHandle;
  if ((input.userId && passkey.userId !== input.userId) || (userHandle !== undefined && userHandle !== passkey.userHandle)) {
    return { ok: false, reason: "wrong_user", userId: passkey.userId };
  }
  const rp = relyingPartyOf(ctx.config.baseUrl);
  let newCounter: number;
  try {
    const verified = await (await webauthn()).verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(passkey.publicKey),
        counter: Number(passkey.counter),
        transports: passkey.transports as AuthenticatorTransport[],
      },
    });
    if (!verified.verified) return { ok: false, reason: "invalid_signature", userId: passkey.userId };
    newCounter = verified.authenticationInfo.newCounter;
  } catch {
    // The library throws for a wrong origin, RP ID, challenge, missing user verification and a counter that did not grow.
    return { ok: false, reason: "invalid_signature", userId: passkey.userId };
  }
  const previous = passkey.counter;
  return {
    ok: true,
    userId: passkey.userId,
    passkeyId: passkey.id,
    kind: passkeyKind(passkey.deviceType),
    take: async (db) => {
      const updated = await db.passkey.updateMany({ where: { id: passkey.id, counter: previous }, data: { counter: BigInt(newCounter), lastUsedAt: new Date() } });
      return updated.count === 1;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Management

export type PasskeyChange = { ok: true } | { ok: false; reason: "not_found" | "invalid_name" };

/** Renames one of the user's passkeys, in the caller's write. */
export async function renamePasskey(ctx: Context, owner: { organizationId: string; userId: string }, passkeyId: string, name: string): Promise<PasskeyChange> {
  const cleaned = cleanName(name);
  if (!cleaned) return { ok: false, reason: "invalid_name" };
  const updated = await ctx.db.passkey.updateMany({ where: { id: passkeyId, userId: owner.userId, organizationId: owner.organizationId }, data: { name: cleaned } });
  if (updated.count !== 1) return { ok: false, reason: "not_found" };
  ctx.audit({ eventType: "account.passkey.renamed", organizationId: owner.organizationId, targetType: "user", targetId: owner.userId, data: { passkeyId, name: cleaned } });
  return { ok: true };
}

/** Deletes one of the user's passkeys, in the caller's write; the caller audits (the person or an administrator). */
export async function deletePasskey(db: Db, owner: { organizationId: string; userId: string }, passkeyId: string): Promise<PasskeySummary | null> {
  const row = await db.passkey.findFirst({ where: { id: passkeyId, userId: owner.userId, organizationId: owner.organizationId } });
  if (!row) return null;
  await db.passkey.delete({ where: { id: row.id } });
  return toSummary(row);
}
