// Webhooks: each event POSTed once per attempt, signed as Standard Webhooks says, in feed order, retried until a 2xx.
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import t, { type Test } from 'tap'
import { newEventId, type OrderChangedEvent } from '../../lib/feed/events.js'
import { memoryStorage, type Order } from '../../lib/index.js'
import { webhook, WebhookDeliveryError } from '../../lib/subscriptions/webhooks.js'
import { buildApp, eventually, logLines, orderBody, waitForEvents } from '../helper.js'

const secretOf = (bytes = 32) => `whsec_${randomBytes(bytes).toString('base64')}`

interface Delivery {
  headers: IncomingHttpHeaders
  body: string
}

/**
 * A receiver on a free port that records every request and answers with `answer` (200 by default);
 * `answer` may also hold the response back or end it without answering.
 */
async function receiver (t: Test, answer: (delivery: Delivery, response: ServerResponse) => void | Promise<void> = () => {}) {
  const deliveries: Delivery[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', chunk => chunks.push(chunk))
    request.on('end', async () => {
      const delivery = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }
      deliveries.push(delivery)
      await answer(delivery, response)
      if (!response.writableEnded && !response.destroyed) response.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/orders`, deliveries }
}

const ids = (deliveries: readonly Delivery[]) => deliveries.map(delivery => delivery.headers['webhook-id'])

t.test('each event is one POST that the standardwebhooks package verifies, in feed order', async t => {
  const secret = secretOf()
  const { url, deliveries } = await receiver(t)
  const app = await buildApp(t)
  app.orders.subscribe('erp', webhook({ url, secret, headers: { 'x-api-key': 'receiver-key' } }), { from: 'start' })
  await app.ready()
  const order = await app.orders.create(orderBody())
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  await eventually('both events are delivered', () => deliveries.length === 2)

  const events = await waitForEvents(app, 2)
  t.same(ids(deliveries), events.map(event => event.id), 'one request per event, in feed order, webhook-id the event id')
  for (const [index, { headers, body }] of deliveries.entries()) {
    const event = events[index]!
    t.equal(headers['content-type'], 'application/json')
    t.equal(headers['x-api-key'], 'receiver-key', 'static headers are sent')
    t.match(headers['webhook-timestamp'], /^\d+$/)
    t.ok(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 60, 'seconds since the epoch, at sending')
    t.equal(body, JSON.stringify({ type: `order.${event.type}`, timestamp: event.at, data: event }), 'the body')
    const verified = new Webhook(secret).verify(body, headers as Record<string, string>)
    t.same(verified, JSON.parse(body), 'standardwebhooks verifies the signature')
  }
  t.throws(() => new Webhook(secretOf()).verify(deliveries[0]!.body, deliveries[0]!.headers as Record<string, string>), 'another secret does not')
  t.throws(() => new Webhook(secret).verify(deliveries[0]!.body.replace('"version":1', '"version":2'), deliveries[0]!.headers as Record<string, string>),
    'nor does a changed body')
})

t.test('during a rotation every secret signs, and each one verifies alone', async t => {
  const [old, next] = [secretOf(24), secretOf(64)]
  const { url, deliveries } = await receiver(t)
  const app = await buildApp(t)
  app.orders.subscribe('erp', webhook({ url, secret: [old, next] }), { from: 'start' })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('the event is delivered', () => deliveries.length === 1)
  const [{ headers, body }] = deliveries as [Delivery]
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/, 'two signatures, space-separated')
  for (const secret of [old, next]) t.doesNotThrow(() => new Webhook(secret).verify(body, headers as Record<string, string>))
})

t.test('a failed delivery is retried and the receiver never sees events out of order', async t => {
  let refused = 0
  // The second event is refused once with a 500, then held past the timeout once, then taken.
  const { url, deliveries } = await receiver(t, async (delivery, response) => {
    if (ids(deliveries).indexOf(delivery.headers['webhook-id']) !== 1) return
    refused++
    if (refused === 1) response.statusCode = 500
    if (refused === 2) await sleep(400)
  })
  const { lines, stream } = logLines()
  const secret = secretOf()
  const app = await buildApp(t, {}, { logger: { stream } })
  const handler = webhook({ url, secret, timeout: 200 })
  app.orders.subscribe('erp', handler, { from: 'start', maxBackoff: 100 })
  await app.ready()
  for (let i = 0; i < 3; i++) await app.orders.create(orderBody())
  await eventually('the refused event shows as failing', () => app.orders.subscriptions()[0]!.failing !== undefined)
  t.same(app.orders.subscriptions()[0]!.failing, { eventId: deliveries[1]!.headers['webhook-id'], attempts: 1, error: `webhook to ${url}: the receiver answered HTTP 500` },
    'the last failure and its HTTP status, for health checks')
  const events = await waitForEvents(app, 3)
  await eventually('every event is delivered', () => app.orders.subscriptions()[0]!.lastEventId === events[2]!.id)
  t.same(ids(deliveries), [events[0]!.id, events[1]!.id, events[1]!.id, events[1]!.id, events[2]!.id], 'the second event three times, then the third')
  const failures = lines.filter(line => line.eventId === events[1]!.id)
  // (The logger adds the message of an error's cause to its own.)
  t.match(failures.map(line => line.err.message), [`webhook to ${url}: the receiver answered HTTP 500`, `webhook to ${url}: no answer within 200 ms`])
  const everything = JSON.stringify(lines) + JSON.stringify(app.orders.subscriptions())
  t.notOk(everything.includes(secret.slice(6)), 'the secret is in no log line and no status')
})

t.test('logs and subscriptions() name the endpoint by origin and path, never its query', async t => {
  const { url } = await receiver(t, (_delivery, response) => { response.statusCode = 503 })
  const { lines, stream } = logLines()
  const app = await buildApp(t, {}, { logger: { stream } })
  app.orders.subscribe('erp', webhook({ url: `${url}?token=S3CRET&tenant=eu`, secret: secretOf() }), { from: 'start', maxBackoff: 50 })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('two failed attempts are logged', () => lines.filter(line => line.subscription === 'erp').length >= 2)
  t.equal(app.orders.subscriptions()[0]!.failing?.error, `webhook to ${url}: the receiver answered HTTP 503`)
  const everything = JSON.stringify(lines) + JSON.stringify(app.orders.subscriptions())
  t.notOk(everything.includes('S3CRET'), 'the token is in no log line and no status')
  t.notOk(everything.includes('tenant=eu'), 'nor any part of the query')
})

t.test('a redirect is a failure, not followed; a network error too', async t => {
  const target = await receiver(t)
  const redirecting = await receiver(t, (_delivery, response) => {
    response.statusCode = 307
    response.setHeader('location', target.url)
  })
  const handler = webhook({ url: redirecting.url, secret: secretOf() })
  const event = (await (await buildApp(t)).orders.create(orderBody()), { id: 'evt-1', type: 'created' as const, at: new Date().toISOString(), order: {} as never })
  await t.rejects(handler(event), { name: 'WebhookDeliveryError', status: 307, message: `webhook to ${redirecting.url}: the receiver answered HTTP 307` })
  t.equal(target.deliveries.length, 0, 'the redirect target is never called')

  // A port nothing listens on any more: the connection is refused.
  const gone = createServer().listen(0, '127.0.0.1')
  await once(gone, 'listening')
  const { port } = gone.address() as AddressInfo
  gone.close()
  const closed = webhook({ url: `http://127.0.0.1:${port}/hooks`, secret: secretOf() })
  const failure = await closed(event).catch((err: unknown) => err)
  t.ok(failure instanceof WebhookDeliveryError)
  t.same([(failure as WebhookDeliveryError).message, (failure as WebhookDeliveryError).status], [`webhook to http://127.0.0.1:${port}/hooks: the request failed`, undefined])
  t.ok((failure as Error).cause instanceof Error, 'the network error is its cause')
})

t.test('types limits what is sent; the others are checkpointed without a request', async t => {
  const { url, deliveries } = await receiver(t)
  const app = await buildApp(t)
  app.orders.subscribe('payments', webhook({ url, secret: secretOf(), types: ['statusChanged'] }), { from: 'start' })
  await app.ready()
  const order = await app.orders.create(orderBody())
  const other = await app.orders.create(orderBody())
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  // On PostgreSQL the feed lists an event once older transactions have ended: wait for all three.
  const events = await waitForEvents(app, 3)
  await eventually('the subscription passes every event', () => app.orders.subscriptions()[0]!.lastEventId === events[2]!.id)
  t.same(deliveries.map(delivery => JSON.parse(delivery.body).type), ['order.statusChanged'])
  t.equal(JSON.parse(deliveries[0]!.body).data.order.id, order.id)
  t.notOk(deliveries.some(delivery => delivery.body.includes(other.id)))
})

t.test('a change after placement is sent as order.changed, by default and when types asks for changes alone', async t => {
  const every = await receiver(t)
  const payments = await receiver(t)
  const secret = secretOf()
  // The changed event as a change stores it, through the storage's replace: on memory, which stores
  // the event of the type it is given.
  const storage = memoryStorage()
  const app = await buildApp(t, { storage })
  app.orders.subscribe('erp', webhook({ url: every.url, secret }), { from: 'start', pollInterval: 20 })
  app.orders.subscribe('payments', webhook({ url: payments.url, secret, types: ['changed'] }), { from: 'start', pollInterval: 20 })
  const order = await app.orders.create(orderBody())
  const at = new Date(Date.parse(order.updatedAt) + 1000).toISOString()
  const change = { version: 2, at, actions: [{ type: 'recordPayment', amount: 2500, reference: 'pi_3Q0' }], totalBefore: 2500, totalAfter: 2500 }
  const after: Order = { ...order, version: 2, updatedAt: at }
  const event: OrderChangedEvent = { id: newEventId(), type: 'changed', at, order: after, change }
  t.ok(await storage.replace(after, 1, event), 'the change is stored')
  await eventually('both subscriptions pass both events', () => app.orders.subscriptions().every(({ lastEventId }) => lastEventId === event.id))

  t.same(every.deliveries.map(delivery => JSON.parse(delivery.body).type), ['order.created', 'order.changed'], 'every type by default')
  t.equal(payments.deliveries.length, 1, 'with types: [\'changed\'], the created event is passed over without a request')
  const [{ headers, body }] = payments.deliveries as [Delivery]
  t.equal(headers['webhook-id'], event.id)
  t.same(JSON.parse(body), { type: 'order.changed', timestamp: at, data: event }, 'data is the event, its change included')
  t.same(new Webhook(secret).verify(body, headers as Record<string, string>), JSON.parse(body), 'signed like every other event')
})

t.test('bad options throw ORDER_INVALID_OPTIONS at the webhook() call, naming no secret', async t => {
  const secret = secretOf()
  const url = 'https://erp.example/hooks'
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /options must be an object/],
    ['a url that is not a URL', { url: 'erp.example/hooks', secret }, /url must be an absolute http or https URL/],
    ['a url of another scheme', { url: 'ftp://erp.example/hooks', secret }, /url must be http or https, not ftp:/],
    ['a secret without its prefix', { url, secret: secret.slice(6) }, /^fastify-order: webhook: secret must be "whsec_" followed by the base64 of 24 to 64 random bytes$/],
    ['a secret too short', { url, secret: secretOf(16) }, /secret must be "whsec_"/],
    ['a secret too long', { url, secret: secretOf(65) }, /secret must be "whsec_"/],
    ['a secret that is not base64', { url, secret: 'whsec_not base64 at all, really!!' }, /secret must be "whsec_"/],
    ['one bad secret of two', { url, secret: [secret, 'whsec_x'] }, /secret\[1\] must be "whsec_"/],
    ['no secret at all', { url, secret: [] }, /secret must be a secret or a non-empty array/],
    ['a timeout of 0', { url, secret, timeout: 0 }, /^fastify-order: webhook: timeout must be an integer from 1 to 2147483647 ms, got 0$/],
    ['an unknown type', { url, secret, types: ['deleted'] }, /types must be an array of event types among "created", "statusChanged", "changed"$/],
    ['headers that are not an object', { url, secret, headers: 'x' }, /headers must be an object/],
    ['an unknown option', { url, secret, retries: 3 }, /unknown option "retries"; the options are url, secret, timeout, types, headers, addresses/],
    ['an unknown addresses', { url, secret, addresses: 'external' }, /addresses must be "any" or "public", got "external"/],
    ['a header that is not a string', { url, secret, headers: { 'x-n': 1 } }, /header "x-n" must be a header name with a one-line string value/],
    ['a header value with a line break', { url, secret, headers: { 'x-key': 'abc\r\nx-evil: 1' } }, /header "x-key" must be a header name with a one-line string value/],
    ['a header fetch sets itself', { url, secret, headers: { 'Content-Length': '1' } }, /header "Content-Length" is one fetch sets itself or refuses/],
    // Node's fetch refuses these at every request: each would be a delivery that can never succeed.
    ...['Expect', 'keep-alive', 'Upgrade', 'connection', 'transfer-encoding', 'TE', 'trailer', 'Proxy-Authorization', 'sec-fetch-mode', 'host']
      .map((name): [string, unknown, RegExp] => [`the header ${name}`, { url, secret, headers: { [name]: 'v' } }, new RegExp(`header "${name}" is one fetch sets itself or refuses`)]),
    ['a user and password in the url', { url: 'https://erp:S3CRET@erp.example/hooks', secret },
      /^fastify-order: webhook: url must not hold a user or password \(fetch refuses them\); for https:\/\/erp.example\/hooks, send credentials in headers/],
    ['a port fetch blocks', { url: 'http://erp.example:6000/hooks?token=S3CRET', secret }, /^fastify-order: webhook: url port 6000 is one fetch blocks \(http:\/\/erp.example:6000\/hooks\); use another port$/],
    ['a bad header name', { url, secret, headers: { 'x n': 'v' } }, /header "x n" must be a header name/],
    ['a header the signature is made of', { url, secret, headers: { 'Webhook-Signature': 'v1,forged' } }, /header "Webhook-Signature" is set by the webhook and cannot be replaced/]
  ]
  for (const [what, options, message] of cases) {
    const thrown = (() => { try { webhook(options as never) } catch (err) { return err as Error & { code?: string } } })()
    t.equal(thrown?.code, 'ORDER_INVALID_OPTIONS', what)
    t.match(thrown?.message, message, what)
    t.notOk(thrown?.message.includes(secret.slice(6)), `${what}: no secret in the message`)
    t.notOk(thrown?.message.includes('S3CRET'), `${what}: no password or token of the url in the message`)
  }
})

t.test('a receiver that never answers is cut off when the subscription\'s timeout aborts the call', async t => {
  let closed = 0
  const hanging = await receiver(t, (_delivery, response) => new Promise(resolve => {
    response.on('close', () => { closed++; resolve() })
  }))
  const app = await buildApp(t)
  // The webhook's own timeout is the longest there is: only the subscription's signal can end the request.
  app.orders.subscribe('erp', webhook({ url: hanging.url, secret: secretOf(), timeout: 2 ** 31 - 1 }), { from: 'start', pollInterval: 20, leaseTtl: 200, timeout: 100, maxBackoff: 50 })
  await app.orders.create(orderBody())
  await eventually('the receiver sees the request end', () => closed >= 1)
  t.match(app.orders.subscriptions()[0]!.failing, { error: 'timed out after 100 ms' })
})

// Internal addresses a URL may name literally, in every form the URL parser reads as one.
const internalUrls = [
  'http://169.254.169.254/latest/meta-data/', 'http://127.0.0.1:5432/', 'http://127.0.0.2/',
  'http://[::1]/', 'http://2130706433/', 'http://0x7f.0.0.1/', 'http://0177.0.0.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/', 'http://10.0.0.8/', 'http://172.16.5.4/', 'http://192.168.0.1/', 'http://100.64.0.1/', 'http://0.0.0.0/',
  'http://[::]/', 'http://[fd00::1]/', 'http://[fe80::1]/', 'http://224.0.0.1/', 'http://255.255.255.255/'
]

t.test('addresses: \'public\' refuses a URL naming an internal address at the webhook() call; the default takes it', async t => {
  const secret = secretOf()
  for (const url of internalUrls) {
    t.throws(() => webhook({ url, secret, addresses: 'public' }), { code: 'ORDER_INVALID_OPTIONS', message: /^fastify-order: webhook: url names (an?|the) .*address.*, which addresses: 'public' refuses$/ }, url)
    t.doesNotThrow(() => webhook({ url, secret }), `${url} with the default`)
    t.doesNotThrow(() => webhook({ url, secret, addresses: 'any' }), `${url} with addresses: 'any'`)
  }
  t.doesNotThrow(() => webhook({ url: 'https://erp.example/hooks', secret, addresses: 'public' }), 'a host name is checked at each delivery')
})

t.test('addresses: \'public\' refuses a host name that resolves to an internal address, before any connection; retried and set aside like any failure', async t => {
  const local = await receiver(t)
  const url = local.url.replace('127.0.0.1', 'localhost')
  const { lines, stream } = logLines()
  const app = await buildApp(t, {}, { logger: { stream } })
  app.orders.subscribe('erp', webhook({ url, secret: secretOf(), addresses: 'public' }), { from: 'start', pollInterval: 20, leaseTtl: 200, retry: { schedule: [0] } })
  const order = await app.orders.create(orderBody())
  await eventually('set aside after two refused attempts', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  const [letter] = (await app.orders.deadLetters('erp')).items
  t.match(letter, { event: { order: { id: order.id } }, attempts: 2, error: /^webhook to http:\/\/localhost:\d+\/hooks\/orders: the host resolves to a loopback address, which addresses: 'public' refuses$/ })
  t.equal(local.deliveries.length, 0, 'the receiver got nothing')
  t.equal(lines.filter(line => line.subscription === 'erp' && line.level === 50).length, 2, 'each refusal logged')
  t.notOk(JSON.stringify(lines).includes('127.0.0.1'), 'no resolved address in the log')
})

t.test('the default addresses: \'any\' still delivers to a host name of this machine', async t => {
  const local = await receiver(t)
  const app = await buildApp(t)
  app.orders.subscribe('erp', webhook({ url: local.url.replace('127.0.0.1', 'localhost'), secret: secretOf() }), { from: 'start', pollInterval: 20, leaseTtl: 200 })
  await app.orders.create(orderBody())
  await eventually('delivered', () => local.deliveries.length === 1)
})
