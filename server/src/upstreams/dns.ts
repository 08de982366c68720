// The seam between the platform and the DNS server that holds the reverse zones of its IPv4
// ranges (issue 37, CONTRACT §13): a service's PTR record is set and cleared through ReverseDns.
// Unlike the node drivers (./registry.ts DRIVERS), there is one DNS server per installation,
// configured from the environment (config-powerdns.ts); ./registry.ts DNS_DRIVERS names the
// driver of each kind (PowerDNS Authoritative: ./powerdns/).
//
// Contract shared by every method:
// - It resolves when the DNS server has accepted the change, or throws UpstreamError and nothing
//   else, never with a credential in its message: 401/403 → auth; the reverse zone of the address
//   is not on the server → not_found; the server refused the record → rejected (its words in
//   `detail`); 5xx, network → unreachable / timeout (retryable).
// - Setting replaces whatever PTR the name had; clearing a name that has none is success, so
//   both are safe to call again after a lost answer.

/** Which reverse zone holds an address's PTR record: the zone's name (absolute, trailing dot). */
export interface ReverseZoneRule {
  /** An IPv4 range, `a.b.c.d/len`. */
  cidr: string;
  /** The zone, e.g. `113.0.203.in-addr.arpa.`, or an RFC 2317 `0/26.113.0.203.in-addr.arpa.`. */
  zone: string;
}

export interface ReverseDns {
  /** The server answers and accepts our key: its software version. */
  ping(): Promise<{ version: string }>;
  /** The reverse zone that holds `address`'s PTR record (the configured rule, else the /24's). */
  zoneOf(address: string): string;
  /** Set the PTR of `address` to `hostname` (lower-case, without the trailing dot), replacing any. */
  setPtr(address: string, hostname: string): Promise<void>;
  /** Remove the PTR of `address` (nothing to remove is success). */
  clearPtr(address: string): Promise<void>;
  /** The PTR of `address` as the server holds it (without the trailing dot), or null. */
  readPtr(address: string): Promise<string | null>;
  /** Close kept-alive connections; the driver must not be used afterwards. */
  close(): void;
}

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** The four octets of a dotted-quad IPv4 address, or null. */
export function octetsOf(address: string): [number, number, number, number] | null {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((p) => OCTET.test(p))) return null;
  return parts.map(Number) as [number, number, number, number];
}

/** The owner name of an address's PTR record: `4.113.0.203.in-addr.arpa.` for 203.0.113.4. */
export function reverseName(address: string): string {
  const octets = octetsOf(address);
  if (!octets) throw new TypeError(`not an IPv4 address: ${JSON.stringify(address)}`);
  return `${octets.reverse().join('.')}.in-addr.arpa.`;
}

/** The /24's reverse zone of an address: `113.0.203.in-addr.arpa.` for 203.0.113.4. */
export function zoneOf24(address: string): string {
  return reverseName(address).split('.').slice(1).join('.');
}

/** An IPv4 CIDR as its network number and prefix length, or null. */
export function parseIpv4Cidr(cidr: string): { network: number; prefix: number } | null {
  const match = /^([\d.]+)\/(\d{1,2})$/.exec(cidr);
  const octets = match ? octetsOf(match[1] as string) : null;
  const prefix = match ? Number(match[2]) : -1;
  if (!octets || prefix < 0 || prefix > 32) return null;
  const value = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: (value & mask) >>> 0, prefix };
}

/** The rule of the most specific configured range holding `address`, else the /24's zone. */
export function reverseZoneFor(address: string, rules: readonly ReverseZoneRule[]): string {
  let best: { zone: string; prefix: number } | null = null;
  const octets = octetsOf(address);
  if (!octets) throw new TypeError(`not an IPv4 address: ${JSON.stringify(address)}`);
  const value = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  for (const rule of rules) {
    const range = parseIpv4Cidr(rule.cidr);
    if (!range) continue;
    const mask = range.prefix === 0 ? 0 : (0xffffffff << (32 - range.prefix)) >>> 0;
    if ((value & mask) >>> 0 === range.network && (best === null || range.prefix > best.prefix)) {
      best = { zone: rule.zone, prefix: range.prefix };
    }
  }
  return best?.zone ?? zoneOf24(address);
}

/** A hostname a PTR record may name: RFC 1123 labels, at most 253 characters (without the trailing dot). */
export const HOSTNAME_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
