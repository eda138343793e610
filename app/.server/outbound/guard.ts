import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from "node:dns";
import { BlockList, isIP } from "node:net";

/**
 * The outbound HTTP guard: every request Porta makes to an address someone else chose (a client's
 * `jwks_uri`, webhooks, an upstream identity provider, and the next fetchers such as SAML
 * metadata or client metadata documents) goes through here, so that no such request reaches a
 * loopback, private or other special-use address unless an operator allows it
 * (OUTBOUND_ALLOW_PRIVATE_NETWORKS). It imports nothing of Porta's.
 */

/**
 * What the provider fetches itself: a client's `jwks_uri` (decision 045). oidc-provider already
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

/**
 * Addresses an outbound request of Porta's own (webhooks, decision 047) never reaches unless the
 * operator allows private networks: loopback, private, link-local, carrier-grade NAT, multicast,
 * reserved and unspecified ranges, in IPv4, IPv6 and IPv4-mapped IPv6.
 */
const SPECIAL_USE = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.88.99.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const)
    list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of [
    ["::", 128],
    ["::1", 128],
    ["64:ff9b::", 96],
    ["64:ff9b:1::", 48],
    ["100::", 64],
    ["2001::", 23],
    ["2001:db8::", 32],
    ["2002::", 16],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
  ] as const)
    list.addSubnet(net, prefix, "ipv6");
  return list;
})();

/** Whether an IP address is one the guard refuses (anything that is not a public unicast address). */
export function isSpecialUseAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return SPECIAL_USE.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return SPECIAL_USE.check(mapped[1]!, "ipv4");
  return SPECIAL_USE.check(address, "ipv6");
}

/** An outbound request refused by the guard: a special-use address, a scheme, a size. */
export class OutboundRefusedError extends Error {
  readonly code = "OUTBOUND_REFUSED";
  constructor(message: string) {
    super(message);
    this.name = "OutboundRefusedError";
  }
}

const refusedHost = (host: string) => new OutboundRefusedError(`refused to connect to a private or special-use address (${host})`);

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** What resolves a name to every address it has (node:dns's `lookup` with `all: true`). */
export type Resolver = (hostname: string, options: { all: true; family: 0 | 4 | 6 }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/**
 * A `lookup` for node:http(s) that resolves the name and refuses special-use addresses. The
 * socket connects to the address checked here, so a name that resolves differently a moment
 * later (DNS rebinding) cannot slip through. IP literals skip `lookup`: check them with
 * `assertPublicHost` before connecting.
 */
export function guardedLookup(allowPrivateNetworks: boolean, resolve: Resolver = dnsLookup) {
  return (hostname: string, options: LookupAllOptions | LookupOneOptions | number, callback: LookupCallback) => {
    const family = typeof options === "number" ? options : (options.family ?? 0);
    const all = typeof options === "object" && "all" in options && options.all === true;
    resolve(hostname, { all: true, family: family as 0 | 4 | 6 }, (error, addresses) => {
      if (error) return callback(error, []);
      const usable = allowPrivateNetworks ? addresses : addresses.filter((a) => !isSpecialUseAddress(a.address));
      if (usable.length === 0) return callback(refusedHost(hostname), []);
      if (all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * Whether a URL's host is known to be local before any name is resolved: a special-use IP literal
 * (node connects to those without `lookup`) or a `localhost` name. Where an address someone gave
 * is refused when it is stored, and again when it is fetched.
 */
export function isSpecialUseHost(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return (isIP(host) !== 0 && isSpecialUseAddress(host)) || host === "localhost" || host.endsWith(".localhost");
}

/** Refuses a URL whose host is a special-use IP literal or a localhost name. */
export function assertPublicHost(url: URL, allowPrivateNetworks: boolean): void {
  if (!allowPrivateNetworks && isSpecialUseHost(url)) throw refusedHost(url.hostname.replace(/^\[|\]$/g, ""));
}

// ---------------------------------------------------------------------------------------------
// Porta's own outbound requests through fetch (an upstream identity provider's discovery, keys
// and token endpoint, decision 046), guarded like the webhooks' (decision 047).

export interface GuardedFetchOptions {
  allowPrivateNetworks: boolean;
  /** Per request, connection to last byte. */
  timeoutMs: number;
  maxBytes: number;
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
  guardedDispatcher = new Agent({ connect: { lookup: guardedLookup(false) } });
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
    if (!options.allowPrivateNetworks && isSpecialUseHost(url)) {
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
