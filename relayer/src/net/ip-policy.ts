// Which IP addresses the relayer may connect to when it calls a creator's endpoint.
//
// Addresses are parsed here rather than with `net` or `URL` because the decision must hold for
// every spelling of an address: an IPv6 address that embeds an IPv4 one reaches that IPv4 host,
// so it is judged by the embedded address, and anything this module cannot read is refused.

export type EndpointPolicy = "public" | "development";

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "metadata"
  | "unspecified"
  | "multicast"
  | "reserved"
  | "documentation"
  | "shared"
  | "invalid";

export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return classifyIPv4(v4);
  const v6 = parseIPv6(ip);
  return v6 === null ? "invalid" : classifyIPv6(v6);
}

// Private ranges stay refused in development too: a local stack runs its agents on loopback, and
// nothing else on the developer's network should be reachable through the relayer.
export function isAllowedAddress(ip: string, policy: EndpointPolicy): boolean {
  const cls = classifyAddress(ip);
  return cls === "public" || (policy === "development" && cls === "loopback");
}

type Words = readonly number[];

function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    // Leading zeros are refused: some resolvers read them as octal, so 010.0.0.1 is ambiguous.
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function parseIPv6(text: string): Words | null {
  let address = text;
  const zone = text.indexOf("%");
  if (zone !== -1) {
    // Same zone-id alphabet as Node's net.isIPv6, so both agree on what an address is.
    if (!/^[0-9A-Za-z.:-]+$/.test(text.slice(zone + 1))) return null;
    address = text.slice(0, zone);
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head = parseGroups(halves[0]!, !compressed);
  const tail = compressed ? parseGroups(halves[1]!, true) : [];
  if (head === null || tail === null) return null;
  const explicit = head.length + tail.length;
  // "::" stands for at least one zero group, so a compressed address has at most seven others.
  if (compressed ? explicit > 7 : explicit !== 8) return null;
  return [...head, ...new Array<number>(8 - explicit).fill(0), ...tail];
}

// A dotted quad may only end the whole address, so it is accepted only in the last group list.
function parseGroups(text: string, last: boolean): number[] | null {
  if (text === "") return [];
  const groups = text.split(":");
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (last && i === groups.length - 1 && group.includes(".")) {
      const v4 = parseIPv4(group);
      if (v4 === null) return null;
      words.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(group)) {
      words.push(parseInt(group, 16));
    } else {
      return null;
    }
  }
  return words;
}

function inIPv4(address: number, base: number, prefix: number): boolean {
  const mask = (~0 << (32 - prefix)) >>> 0;
  return ((address & mask) >>> 0) === base;
}

function inIPv6(address: Words, base: Words, prefix: number): boolean {
  for (let i = 0, bits = prefix; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((address[i]! & mask) !== (base[i]! & mask)) return false;
  }
  return true;
}

const v4 = (text: string): number => parseIPv4(text)!;
const v6 = (text: string): Words => parseIPv6(text)!;

// Instance-metadata and credential services: AWS/GCP/Azure/OCI IMDS, AWS ECS task metadata,
// AWS EKS Pod Identity, Alibaba Cloud. They sit inside refused ranges anyway; naming them makes
// the refusal say what was being reached for.
const METADATA_V4 = new Set(["169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200"].map(v4));
const METADATA_V6 = [v6("fd00:ec2::254"), v6("fd00:ec2::23")];

// IANA special-purpose registry, most specific first. Everything not listed is public.
const IPV4_RANGES: ReadonlyArray<readonly [number, number, AddressClass]> = [
  [v4("0.0.0.0"), 8, "unspecified"], // Linux connects 0.0.0.0 to the local host
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "shared"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link_local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"],
  [v4("192.0.2.0"), 24, "documentation"],
  [v4("192.88.99.0"), 24, "reserved"], // deprecated 6to4 relay anycast
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "reserved"],
  [v4("198.51.100.0"), 24, "documentation"],
  [v4("203.0.113.0"), 24, "documentation"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved"], // includes the 255.255.255.255 broadcast address
];

function classifyIPv4(address: number): AddressClass {
  if (METADATA_V4.has(address)) return "metadata";
  return IPV4_RANGES.find(([base, prefix]) => inIPv4(address, base, prefix))?.[2] ?? "public";
}

const low32 = (w: Words): number => w[6]! * 0x10000 + w[7]!;

// Teredo traffic goes both to the client's mapped address and, for bubbles, to the server,
// so either being internal makes the address internal.
function classifyTeredo(w: Words): AddressClass {
  const client = classifyIPv4(~low32(w) >>> 0);
  return client !== "public" ? client : classifyIPv4(w[2]! * 0x10000 + w[3]!);
}

// Forms that carry an IPv4 address; the host reached is that IPv4 host.
const IPV6_EMBEDDINGS: ReadonlyArray<readonly [Words, number, (w: Words) => AddressClass]> = [
  [v6("::ffff:0:0"), 96, (w) => classifyIPv4(low32(w))], // IPv4-mapped
  [v6("::ffff:0:0:0"), 96, (w) => classifyIPv4(low32(w))], // IPv4-translated (SIIT)
  [v6("64:ff9b::"), 96, (w) => classifyIPv4(low32(w))], // NAT64 well-known prefix
  // Local-use NAT64 (RFC 8215) lets the operator embed the IPv4 address at several offsets. Only
  // the unambiguous /96 form is read; other addresses in 64:ff9b:1::/48 fall through to reserved.
  [v6("64:ff9b:1::"), 96, (w) => classifyIPv4(low32(w))],
  [v6("2002::"), 16, (w) => classifyIPv4(w[1]! * 0x10000 + w[2]!)], // 6to4
  [v6("2001::"), 32, classifyTeredo],
];

const IPV6_RANGES: ReadonlyArray<readonly [Words, number, AddressClass]> = [
  [v6("ff00::"), 8, "multicast"],
  [v6("fe80::"), 10, "link_local"],
  [v6("fc00::"), 7, "private"],
  [v6("2001:db8::"), 32, "documentation"],
  [v6("3fff::"), 20, "documentation"],
  // IETF protocol assignments. The few globally reachable ones inside (PCP and TURN anycast, AMT,
  // AS112, ORCHIDv2) are not plausible agent endpoints, so the whole block is refused.
  [v6("2001::"), 23, "reserved"],
  [v6("2000::"), 3, "public"],
];

const ZERO_96 = v6("::");

function classifyIPv6(w: Words): AddressClass {
  // ::/96 holds the unspecified and loopback addresses and the deprecated IPv4-compatible form.
  if (inIPv6(w, ZERO_96, 96)) {
    if (low32(w) === 0) return "unspecified";
    if (low32(w) === 1) return "loopback";
    return classifyIPv4(low32(w));
  }
  const embedding = IPV6_EMBEDDINGS.find(([base, prefix]) => inIPv6(w, base, prefix));
  if (embedding) return embedding[2](w);
  if (METADATA_V6.some((m) => inIPv6(w, m, 128))) return "metadata";
  // Only 2000::/3 is allocated for global unicast; anything else (100::/64 discard, 5f00::/16
  // SRv6, unassigned space) is reserved.
  return IPV6_RANGES.find(([base, prefix]) => inIPv6(w, base, prefix))?.[2] ?? "reserved";
}
