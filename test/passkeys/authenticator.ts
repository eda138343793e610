import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

/**
 * A software WebAuthn authenticator for the tests: it answers the options Porta sends with the
 * bytes a real authenticator would (ES256 keys, attestation `none`, authenticator data with the
 * RP ID hash, flags and counter, a signature over authenticatorData ‖ SHA-256(clientDataJSON)),
 * so the server library verifies real signatures. Each answer can be bent (origin, RP ID,
 * counter, flags) to prove what the server refuses.
 */

// --- a CBOR encoder for the few shapes WebAuthn needs (RFC 8949: unsigned and negative
// integers, byte and text strings, maps).
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;
function cbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  const parts: Buffer[] = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return Buffer.concat(parts);
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  userHandle: string;
  rpId: string;
  counter: number;
  synced: boolean;
}

export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string };
  pubKeyCredParams: Array<{ alg: number; type: string }>;
}
export interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
}

export interface Bend {
  origin?: string;
  rpId?: string;
  /** The counter to report (a real authenticator reports one more than before). */
  counter?: number;
  /** Leaves user verification out of the flags. */
  noUserVerification?: boolean;
  /** Signs a different challenge than the one in the options. */
  challenge?: string;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(readonly origin: string) {}

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter >>> 0, 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** navigator.credentials.create(): a new ES256 key pair for the user, attestation `none`. */
  create(options: CreationOptions, bend: Bend & { synced?: boolean } = {}) {
    const rpId = bend.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, "base64url")],
        [-3, Buffer.from(jwk.y!, "base64url")],
      ]),
    );
    const id = randomBytes(16);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length, 0);
    const aaguid = Buffer.alloc(16);
    const attested = Buffer.concat([aaguid, idLength, id, coseKey]);
    const synced = bend.synced ?? false;
    const flags = FLAGS.UP | (bend.noUserVerification ? 0 : FLAGS.UV) | FLAGS.AT | (synced ? FLAGS.BE | FLAGS.BS : 0);
    const authData = this.authData(rpId, flags, 0, attested);
    const clientDataJSON = JSON.stringify({ type: "webauthn.create", challenge: bend.challenge ?? options.challenge, origin: bend.origin ?? this.origin, crossOrigin: false });
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    const credential: SoftCredential = { id, privateKey, userHandle: options.user.id, rpId, counter: 0, synced };
    this.credentials.push(credential);
    return {
      credential,
      response: {
        id: b64url(id),
        rawId: b64url(id),
        type: "public-key",
        response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ["internal"] },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      },
    };
  }

  /** navigator.credentials.get(): an assertion by `credential` (default: the first one the options allow, or the newest). */
  get(options: RequestOptions, credential?: SoftCredential, bend: Bend = {}) {
    const allowed = options.allowCredentials?.map((c) => c.id);
    const chosen = credential ?? [...this.credentials].reverse().find((c) => !allowed || allowed.includes(b64url(c.id)));
    if (!chosen) throw new Error("no credential for these options");
    chosen.counter = bend.counter ?? chosen.counter + 1;
    const flags = FLAGS.UP | (bend.noUserVerification ? 0 : FLAGS.UV) | (chosen.synced ? FLAGS.BE | FLAGS.BS : 0);
    const authenticatorData = this.authData(bend.rpId ?? options.rpId ?? chosen.rpId, flags, chosen.counter);
    const clientDataJSON = JSON.stringify({ type: "webauthn.get", challenge: bend.challenge ?? options.challenge, origin: bend.origin ?? this.origin, crossOrigin: false });
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), chosen.privateKey);
    return {
      id: b64url(chosen.id),
      rawId: b64url(chosen.id),
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: chosen.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }
}
