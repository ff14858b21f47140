// Public addresses only: which IP addresses a webhook with `addresses: 'public'` refuses, and a POST pinned to the addresses it checked.
import { promises as dns } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'

type Range = readonly [base: number, bits: number, kind: string]

// IPv4 ranges that are not public unicast (IANA special-purpose registry), the first match naming it.
const V4: readonly Range[] = [
  [0x00000000, 8, 'an unspecified ("this network") address'],
  [0x0a000000, 8, 'a private address (RFC 1918)'],
  [0x64400000, 10, 'a carrier-grade NAT address (100.64.0.0/10)'],
  [0x7f000000, 8, 'a loopback address'],
  [0xa9fe0000, 16, 'a link-local address (169.254.0.0/16, where cloud metadata answers)'],
  [0xac100000, 12, 'a private address (RFC 1918)'],
  [0xc0000000, 24, 'a reserved address (192.0.0.0/24)'],
  [0xc0000200, 24, 'a documentation address'],
  [0xc0a80000, 16, 'a private address (RFC 1918)'],
  [0xc6120000, 15, 'a benchmarking address (198.18.0.0/15)'],
  [0xc6336400, 24, 'a documentation address'],
  [0xcb007100, 24, 'a documentation address'],
  [0xe0000000, 4, 'a multicast address'],
  [0xffffffff, 32, 'the broadcast address'],
  [0xf0000000, 4, 'a reserved address (240.0.0.0/4)']
]

function ipv4Of (text: string): number {
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0)
}

function ipv4Kind (address: number): string | undefined {
  return V4.find(([base, bits]) => Math.floor(address / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)))?.[2]
}

/** The eight 16-bit groups of a valid IPv6 address, its zone dropped and a dotted IPv4 tail read. */
function hextetsOf (text: string): number[] {
  let address = text.split('%')[0]!
  const tail = address.slice(address.lastIndexOf(':') + 1)
  if (tail.includes('.')) {
    const v4 = ipv4Of(tail)
    address = `${address.slice(0, address.length - tail.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const groups = (part: string) => part === '' ? [] : part.split(':').map(group => parseInt(group, 16))
  const [head, rest] = address.split('::') as [string, string | undefined]
  if (rest === undefined) return groups(head)
  const [before, after] = [groups(head), groups(rest)]
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after]
}

function ipv6Kind (text: string): string | undefined {
  const h = hextetsOf(text)
  const zeros = (count: number) => h.slice(0, count).every(group => group === 0)
  const embedded = (at: number) => (h[at]! * 0x10000 + h[at + 1]!)
  if (zeros(8)) return 'an unspecified address'
  if (zeros(7) && h[7] === 1) return 'a loopback address'
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address: it decides.
  if (zeros(5) && h[5] === 0xffff) return ipv4Kind(embedded(6))
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every(group => group === 0)) return ipv4Kind(embedded(6))
  if (h[0] === 0x2002) return ipv4Kind(embedded(1))
  if (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 1) return 'a private address (local-use NAT64)'
  if ((h[0]! & 0xfe00) === 0xfc00) return 'a private address (unique local, fc00::/7)'
  if ((h[0]! & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)'
  if ((h[0]! & 0xff00) === 0xff00) return 'a multicast address'
  if (h[0] === 0x2001 && h[1] === 0x0db8) return 'a documentation address'
  if (h[0] === 0x2001 && h[1]! < 0x0200) return 'a reserved address (2001::/23: Teredo and other IETF uses)'
  // Global unicast is 2000::/3; the rest (IPv4-compatible ::a.b.c.d, site-local fec0::/10, discard 100::/64...) is not.
  return (h[0]! & 0xe000) === 0x2000 ? undefined : 'a reserved address (outside global unicast 2000::/3)'
}

/**
 * What kind of address `address` (an IPv4 or IPv6 address, as a resolver gives it) is when it is not
 * public unicast, as the message names it ("a loopback address"); undefined for a public one.
 */
export function nonPublicKind (address: string): string | undefined {
  const version = isIP(address)
  if (version === 4) return ipv4Kind(ipv4Of(address))
  if (version === 6) return ipv6Kind(address)
  return 'not an IP address'
}

/** The kind of a URL's host when it is an IP address that is not public; undefined for a host name or a public address. */
export function literalKind (hostname: string): string | undefined {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  return isIP(host) === 0 ? undefined : nonPublicKind(host)
}

/** A host name's addresses. */
export type Resolve = (hostname: string) => Promise<ReadonlyArray<{ address: string, family: number }>>

const systemResolve: Resolve = hostname => dns.lookup(hostname, { all: true, verbatim: true })

/** A delivery refused because the host resolves to an address that is not public. */
export class AddressRefusedError extends Error {
  constructor (readonly kind: string) {
    super(`the host resolves to ${kind}, which addresses: 'public' refuses`)
    this.name = 'AddressRefusedError'
  }
}

/**
 * A `lookup` for node:http that resolves the host name at each connection, refuses it unless every
 * address is public, and hands the connection exactly the addresses it checked: no second lookup, so
 * DNS rebinding cannot slip another address in between.
 */
export function publicLookup (resolve: Resolve = systemResolve, kindOf: (address: string) => string | undefined = nonPublicKind): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(found => {
      const addresses = found.filter(({ family }) => options.family === undefined || options.family === 0 || family === options.family)
      if (addresses.length === 0) throw Object.assign(new Error('no address found for the host'), { code: 'ENOTFOUND' })
      const refused = addresses.map(({ address }) => kindOf(address)).find(kind => kind !== undefined)
      if (refused !== undefined) throw new AddressRefusedError(refused)
      if (options.all === true) callback(null, addresses)
      else callback(null, addresses[0]!.address, addresses[0]!.family)
    }).catch((err: NodeJS.ErrnoException) => { callback(err, '', 0) })
  }
}

export interface PinnedPost {
  body: string
  headers: Record<string, string>
  signal: AbortSignal
  lookup: LookupFunction
}

/**
 * POSTs `body` to `url` over a connection of its own whose address comes from `lookup`, and resolves
 * with the answer's status (its body is not read). A redirect is an answer like any other.
 */
export function postPinned (url: URL, { body, headers, signal, lookup }: PinnedPost): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      signal,
      lookup,
      // A connection per delivery: each one resolves and checks the host again.
      agent: false
    }, (response: IncomingMessage) => {
      resolve(response.statusCode!)
      response.destroy()
    })
    request.on('error', reject)
    request.end(body)
  })
}
