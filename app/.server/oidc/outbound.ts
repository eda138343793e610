import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";

/**
 * What the provider fetches itself: a client's `jwks_uri` (issue 24 §2). oidc-provider already
 * refuses special-use addresses (loopback, private, link-local; checked on the connected socket,
 * so DNS rebinding cannot slip through) and gives up after 2.5 s; Porta adds a size limit and,
 * only when an operator allows it (OUTBOUND_ALLOW_PRIVATE_NETWORKS, for tests and closed
 * networks), lets requests reach private addresses.
 */
export const JWKS_URI_MAX_BYTES = 64 * 1024;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function outboundFetch(allowPrivateNetworks: boolean): Fetch {
  return (input, init = {}) => {
    // A key set that redirects elsewhere is refused, not followed to wherever it points.
    if (!allowPrivateNetworks) return globalThis.fetch(input, { ...init, redirect: "error" });
    // The provider's guard is its dispatcher; without it, undici's default one connects anywhere.
    const { dispatcher: _guard, ...rest } = init as RequestInit & { dispatcher?: unknown };
    return globalThis.fetch(input, { ...rest, redirect: "error" });
  };
}

// ---------------------------------------------------------------------------------------------
// Porta's own outbound requests (an upstream identity provider's discovery, keys and token
// endpoint, decision 046): the same rules as the provider's, applied by Porta itself.

/** Special-use ranges (RFC 6890 and successors) no outbound request may reach unless an operator allows it. */
const SPECIAL_USE = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
    ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
    ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
  ] as const) list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of [
    ["::", 128], ["::1", 128], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 23], ["2001:db8::", 32],
    ["2002::", 16], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8],
  ] as const) list.addSubnet(net, prefix, "ipv6");
  return list;
})();

export function isSpecialUseAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries (BlockList checks IPv4 against IPv6 rules too,
  // so the mapped range itself is not listed: it would match every IPv4 address).
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return SPECIAL_USE.check(mapped[1]!, "ipv4");
  return SPECIAL_USE.check(address, family === 6 ? "ipv6" : "ipv4");
}

export class OutboundRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundRefusedError";
  }
}

export interface GuardedFetchOptions {
  allowPrivateNetworks: boolean;
  /** Per request, connection to last byte. */
  timeoutMs: number;
  maxBytes: number;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The DNS lookup the connection uses, refusing special-use answers: the address checked is the
 * address connected to, so a name that resolves differently the second time (DNS rebinding)
 * gains nothing.
 */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => isSpecialUseAddress(a.address));
    if (refused) return callback(Object.assign(new OutboundRefusedError(`${hostname} resolves to a special-use address`), { code: "EREFUSED" }), []);
    if (options.all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}

let guardedDispatcher: unknown;

/** An undici agent of Node's own fetch (the class of its global dispatcher) that connects through the guarded lookup. */
function dispatcherWithGuard(): unknown {
  if (guardedDispatcher) return guardedDispatcher;
  // Node's fetch only accepts dispatchers of its bundled undici; its class is reachable through
  // the global dispatcher (the same way oidc-provider builds its guarded one).
  void Response;
  const globals = globalThis as unknown as Record<symbol, { constructor: new (options: unknown) => unknown } | undefined>;
  const Agent = (globals[Symbol.for("undici.globalDispatcher.2")] ?? globals[Symbol.for("undici.globalDispatcher.1")])?.constructor;
  if (!Agent) throw new Error("no undici agent to guard outbound requests with");
  guardedDispatcher = new Agent({ connect: { lookup: guardedLookup } });
  return guardedDispatcher;
}

/**
 * fetch for Porta's own outbound requests: special-use addresses refused (names by their
 * resolved address, literals before connecting) unless allowed, no redirects followed, a
 * timeout, and a body size limit.
 */
export function guardedFetch(options: GuardedFetchOptions): Fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundRefusedError(`${url.protocol} is not fetched`);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (!options.allowPrivateNetworks && (isSpecialUseAddress(host) || host === "localhost")) {
      throw new OutboundRefusedError(`${url.hostname} is a special-use address`);
    }
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
    const guarded = options.allowPrivateNetworks ? {} : { dispatcher: dispatcherWithGuard() };
    const response = await globalThis.fetch(input, { ...init, ...guarded, signal, redirect: "manual" } as RequestInit);
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > options.maxBytes) {
      await response.body?.cancel();
      throw new OutboundRefusedError("the response is too large");
    }
    const body = await readLimited(response, options.maxBytes);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

async function readLimited(response: Response, maxBytes: number): Promise<Blob | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new OutboundRefusedError("the response is too large");
    }
    chunks.push(value);
  }
  return new Blob(chunks.map((c) => new Uint8Array(c)));
}
