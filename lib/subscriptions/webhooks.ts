// Webhooks: a subscription handler that POSTs each event to an endpoint, signed as Standard Webhooks says.
import { createHmac } from 'node:crypto'
import { codes } from '../errors.js'
import type { OrderEvent } from '../feed/events.js'
import { webhook as limits } from '../limits.js'
import { optionChecker } from '../option-checks.js'
import { AddressRefusedError, literalKind, postPinned, publicLookup } from './addresses.js'

export interface WebhookOptions {
  /** Where each event is POSTed: an http or https URL. */
  url: string
  /** `whsec_` and the base64 of 24 to 64 random bytes; several during a rotation, each signing. */
  secret: string | readonly string[]
  /** Milliseconds before a delivery that has not answered counts as failed. Default 10 000. */
  timeout?: number
  /** The event types to send; others are passed over (and checkpointed) without a request. Default: all. */
  types?: ReadonlyArray<OrderEvent['type']>
  /** Static headers added to every request, e.g. an API key of the receiver. */
  headers?: Readonly<Record<string, string>>
  /**
   * `'any'` (default): deliver wherever `url` leads, your own internal services included. `'public'`:
   * only to public unicast addresses, checked on the addresses the host resolves to at each delivery
   * and connected to as checked; loopback, private, link-local (cloud metadata), CGNAT, unspecified,
   * multicast and broadcast addresses, and their IPv4-mapped and NAT64 forms, are refused. Use it when
   * your users register the URLs.
   */
  addresses?: 'any' | 'public'
}

/** A failed delivery: the receiver's HTTP status when it answered, never a secret. */
export class WebhookDeliveryError extends Error {
  readonly status: number | undefined

  constructor (message: string, status?: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'WebhookDeliveryError'
    this.status = status
  }
}

// `changed` comes only from a host with the changes option on (section 17); the others never see one.
const TYPES: ReadonlyArray<OrderEvent['type']> = ['created', 'statusChanged', 'changed']
// The headers the signature is made of: a static header may not replace them.
const SIGNED_HEADERS = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']
// The Fetch standard's forbidden request headers, which fetch sets itself or refuses (Node's refuses
// keep-alive, upgrade, expect, connection, transfer-encoding and content-length at every request).
const FETCH_HEADERS = new Set([
  'accept-charset', 'accept-encoding', 'access-control-request-headers', 'access-control-request-method', 'connection',
  'content-length', 'cookie', 'cookie2', 'date', 'dnt', 'expect', 'host', 'keep-alive', 'origin', 'referer',
  'set-cookie', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'via'
])
const FETCH_HEADER_PREFIXES = ['proxy-', 'sec-']
// The Fetch standard's bad ports: fetch refuses every request to them.
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111,
  113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080
])
const OPTIONS = ['url', 'secret', 'timeout', 'types', 'headers', 'addresses']
// A header value is one line of visible characters, spaces and tabs: a line break would make every request fail.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const check = optionChecker('webhook: ', codes.ORDER_INVALID_OPTIONS)
const { invalid } = check

/** The signing key of a `whsec_` secret; the message names its place in the list, never its value. */
function keyOf (secret: unknown, place: string): Buffer {
  const encoded = typeof secret === 'string' && secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : undefined
  const key = encoded === undefined ? undefined : Buffer.from(encoded, 'base64')
  if (key === undefined || key.toString('base64') !== encoded || key.length < limits.minSecretBytes || key.length > limits.maxSecretBytes) {
    throw invalid(`${place} must be "whsec_" followed by the base64 of ${limits.minSecretBytes} to ${limits.maxSecretBytes} random bytes`)
  }
  return key
}

function checkOptions (options: WebhookOptions) {
  const record = check.known(options, OPTIONS, '{ url, secret }')
  const timeout = check.integer(record, 'timeout', { fallback: limits.defaultTimeout, max: limits.maxTimeout, unit: ' ms' })
  const { url, secret, types = TYPES, headers = {} } = options
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw invalid('url must be an absolute http or https URL')
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw invalid(`url must be http or https, not ${target.protocol}`)
  // Named by origin and path from here on: a query string often carries the receiver's token.
  const endpoint = `${target.origin}${target.pathname}`
  if (target.username !== '' || target.password !== '') {
    throw invalid(`url must not hold a user or password (fetch refuses them); for ${endpoint}, send credentials in headers, e.g. { authorization: 'Basic …' }`)
  }
  if (target.port !== '' && BAD_PORTS.has(Number(target.port))) throw invalid(`url port ${target.port} is one fetch blocks (${endpoint}); use another port`)
  const addresses = check.oneOf(record, 'addresses', ['any', 'public'] as const, 'any')
  // The URL parser has already read 2130706433, 0x7f.1 and 0177.0.0.1 as 127.0.0.1.
  const literal = addresses === 'public' ? literalKind(target.hostname) : undefined
  if (literal !== undefined) throw invalid(`url names ${literal} (${endpoint}), which addresses: 'public' refuses`)
  const secrets = typeof secret === 'string' ? [secret] : secret
  if (!Array.isArray(secrets) || secrets.length === 0) throw invalid('secret must be a secret or a non-empty array of them')
  const keys = secrets.map((one, index) => keyOf(one, typeof secret === 'string' ? 'secret' : `secret[${index}]`))
  if (!Array.isArray(types) || !types.every(type => TYPES.includes(type))) {
    throw invalid(`types must be an array of event types among ${TYPES.map(type => `"${type}"`).join(', ')}`)
  }
  if (typeof headers !== 'object' || headers === null) throw invalid('headers must be an object of header names and string values')
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name) || typeof value !== 'string' || !HEADER_VALUE.test(value)) {
      throw invalid(`header ${JSON.stringify(name)} must be a header name with a one-line string value`)
    }
    const lower = name.toLowerCase()
    if (SIGNED_HEADERS.includes(lower)) throw invalid(`header "${name}" is set by the webhook and cannot be replaced`)
    if (FETCH_HEADERS.has(lower) || FETCH_HEADER_PREFIXES.some(prefix => lower.startsWith(prefix))) {
      throw invalid(`header "${name}" is one fetch sets itself or refuses, so no delivery could send it`)
    }
  }
  return { url: target, endpoint, keys, timeout, types: new Set(types), headers: { ...headers }, lookup: addresses === 'public' ? publicLookup() : undefined }
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/**
 * The Standard Webhooks retry schedule, in ms: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the
 * failed attempts, about 27.6 hours in all before the event is set aside as a dead letter. For
 * `app.orders.subscribe(name, webhook(…), { retry: { schedule: webhookRetrySchedule } })`.
 */
export const webhookRetrySchedule: readonly number[] = Object.freeze([
  5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR
])

/** One POST through fetch; resolves with the status, the body not read, so the connection is freed at once. */
async function post (url: URL, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<number> {
  const response = await fetch(url, { method: 'POST', body, headers, redirect: 'manual', signal })
  await response.body?.cancel()
  return response.status
}

/**
 * A subscription handler that delivers each event to `url` as one signed POST, for
 * `app.orders.subscribe(name, webhook({ url, secret }))`. Body: `{"type":"order.<type>",
 * "timestamp":"<event.at>","data":<event>}`; headers `webhook-id` (the event id, for the receiver to
 * deduplicate on), `webhook-timestamp` (seconds at sending) and `webhook-signature` (`v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret). A 2xx answer delivers the event; any
 * other answer (a redirect included: it is not followed), a timeout or a network error throws, so
 * the subscription retries that event as its `retry` option says, and delivers none of that order's
 * later events before it is delivered or set aside. Bad options throw
 * ORDER_INVALID_OPTIONS here, and so does what fetch would refuse at every delivery (credentials in
 * the URL, a port it blocks, a header it forbids or sets itself), and with `addresses: 'public'` a URL
 * naming an internal address. Secrets appear in no message, and the endpoint is named by origin and
 * path only: a query string often carries a token. The subscription's `signal` ends a request its
 * handler timeout has given up on.
 */
export function webhook (options: WebhookOptions): (event: OrderEvent, context?: { signal?: AbortSignal }) => Promise<void> {
  const { url, endpoint, keys, timeout, types, headers, lookup } = checkOptions(options)
  return async function deliver (event: OrderEvent, context?: { signal?: AbortSignal }): Promise<void> {
    if (!types.has(event.type)) return
    const body = JSON.stringify({ type: `order.${event.type}`, timestamp: event.at, data: event })
    const timestamp = String(Math.floor(Date.now() / 1000))
    const signed = `${event.id}.${timestamp}.${body}`
    const signature = keys.map(key => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ')
    const timer = AbortSignal.timeout(timeout)
    // The subscription's signal too: a call past its handler timeout stops sending.
    const signal = context?.signal === undefined ? timer : AbortSignal.any([timer, context.signal])
    const sent = { ...headers, 'content-type': 'application/json', 'webhook-id': event.id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }
    let status: number
    try {
      status = await (lookup === undefined ? post(url, body, sent, signal) : postPinned(url, { body, headers: sent, signal, lookup }))
    } catch (err) {
      const reason = err instanceof AddressRefusedError ? err.message : timer.aborted ? `no answer within ${timeout} ms` : 'the request failed'
      throw new WebhookDeliveryError(`webhook to ${endpoint}: ${reason}`, undefined, err)
    }
    if (status < 200 || status > 299) {
      throw new WebhookDeliveryError(`webhook to ${endpoint}: the receiver answered HTTP ${status}`, status)
    }
  }
}
