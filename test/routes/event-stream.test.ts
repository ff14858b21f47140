// The event stream: GET /order/events as Server-Sent Events of the feed, in the caller's scope, resumable, ended by close.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import Fastify from 'fastify'
import orderPlugin, { memoryStorage, type OrderEvent, type OrderPluginOptions } from '../../lib/index.js'
import { buildApp, createOrder, eventually, post, testStorage, waitForEvents } from '../helper.js'

interface Message {
  id: string | undefined
  event: string | undefined
  data: string
}

interface Stream {
  status: number
  headers: http.IncomingHttpHeaders
  /** The messages so far, in the order received. */
  messages: Message[]
  /** Comment lines so far. */
  comments: number
  /** Resolves once the server ended the response. */
  ended: Promise<void>
  /** The body of an answer that is not a stream. */
  body: () => string
  close: () => void
}

async function listening (app: FastifyInstance): Promise<string> {
  if (app.server.listening) return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

/** Opens the stream as a browser's EventSource would, and resolves once it has its place (its first comment line) or the answer is not a stream. */
async function openStream (app: FastifyInstance, options: { query?: string, headers?: Record<string, string> } = {}): Promise<Stream> {
  const base = await listening(app)
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/order/events${options.query ?? ''}`, { headers: { accept: 'text/event-stream', ...options.headers } }, response => {
      response.setEncoding('utf8')
      let text = ''
      let settled = false
      let endedResolve: () => void
      const stream: Stream = {
        status: response.statusCode!,
        headers: response.headers,
        messages: [],
        comments: 0,
        ended: new Promise(resolve => { endedResolve = resolve }),
        body: () => text,
        close: () => { request.destroy() }
      }
      const parse = () => {
        let end: number
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end)
          text = text.slice(end + 2)
          const lines = block.split('\n')
          if (lines.every(line => line.startsWith(':'))) {
            stream.comments++
            continue
          }
          const message: Message = { id: undefined, event: undefined, data: '' }
          for (const line of lines) {
            const colon = line.indexOf(':')
            const field = colon < 0 ? line : line.slice(0, colon)
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
            if (field === 'id') message.id = value
            if (field === 'event') message.event = value
            if (field === 'data') message.data = value
          }
          stream.messages.push(message)
        }
      }
      response.on('data', (chunk: string) => {
        text += chunk
        if (stream.status !== 200) return
        parse()
        if (!settled && (stream.comments > 0 || stream.messages.length > 0)) {
          settled = true
          resolve(stream)
        }
      })
      response.on('close', () => {
        endedResolve()
        if (!settled) resolve(stream)
      })
    })
    request.on('error', err => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err)
    })
  })
}

/** The stream's events, parsed, once it has `count` of them. */
async function eventsOf (stream: Stream, count: number): Promise<OrderEvent[]> {
  await eventually(`${count} events on the stream (has ${stream.messages.length})`, () => stream.messages.length >= count)
  return stream.messages.slice(0, count).map(message => JSON.parse(message.data) as OrderEvent)
}

/** Each scope by a header, as a host's login would give it. */
const byHeaders: OrderPluginOptions['authorize'] = request => {
  if (request.headers['x-deny'] !== undefined) return false
  const scope: Record<string, string> = {}
  if (typeof request.headers['x-customer'] === 'string') scope.customerId = request.headers['x-customer']
  if (typeof request.headers['x-store'] === 'string') scope.store = request.headers['x-store']
  return Object.keys(scope).length === 0 ? true : scope
}

t.test('register refuses a stream option that cannot work, naming what to change', async t => {
  const { create, get, list, replace, purgeIdempotencyKeys } = memoryStorage()
  const ordersOnly = { create, get, list, replace, purgeIdempotencyKeys }
  const cases: Array<[unknown, RegExp, OrderPluginOptions?]> = [
    ['yes', /stream must be true or an object like \{ maxClients: 1000 \}, got "yes"/],
    [{ maxClient: 5 }, /unknown option "stream.maxClient"; the options of stream are maxClients, pollInterval, heartbeatInterval/],
    [{ maxClients: 0 }, /stream.maxClients must be an integer from 1 to 100000, got 0/],
    [{ pollInterval: 1.5 }, /stream.pollInterval must be an integer from 1 to 60000 ms, got 1.5/],
    [{ heartbeatInterval: 30_000 }, /stream.heartbeatInterval must be an integer from 1 to 15000 ms, got 30000/],
    [true, /stream needs a storage with the event feed \(listEvents, purgeEvents\)/, { storage: ordersOnly }]
  ]
  for (const [stream, message, options] of cases) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(orderPlugin, { ...options, stream } as never).ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, JSON.stringify(stream))
  }
})

t.test('without the stream option there is no event stream', async t => {
  const app = await buildApp(t)
  const response = await app.inject({ method: 'GET', url: '/order/events' })
  t.equal(response.statusCode, 404)
})

t.test('each event in the caller\'s scope arrives in feed order as id, event and data, as the feed lists it', async t => {
  const app = await buildApp(t, { stream: true, authorize: byHeaders })
  const all = await openStream(app)
  const customer = await openStream(app, { headers: { 'x-customer': 'cus_1' } })
  const store = await openStream(app, { headers: { 'x-store': 'north' } })
  t.equal(all.status, 200)
  t.match(all.headers['content-type'], /^text\/event-stream/)
  t.equal(all.headers['cache-control'], 'no-cache')

  const first = await createOrder(app, { customerId: 'cus_1' })
  const other = await createOrder(app, { customerId: 'cus_2', store: 'north' })
  await createOrder(app, { customerId: 'cus_1', store: 'south' })
  await post(app, 'updateOrderStatus', { id: first.id, status: 'paid' })
  await post(app, 'updateOrderStatus', { id: other.id, status: 'paid' })
  const feed = await waitForEvents(app, 5)

  t.same(await eventsOf(all, 5), feed, 'the unscoped stream has every event, exactly as listEvents lists it')
  t.same(all.messages.map(({ id, event }) => ({ id, event })), feed.map(({ id, type }) => ({ id, event: type })), 'id and event are the event\'s id and type')
  const inCustomer = feed.filter(event => event.order.customerId === 'cus_1')
  t.same(await eventsOf(customer, inCustomer.length), inCustomer, 'a customer\'s stream has that customer\'s orders only')
  const inStore = feed.filter(event => event.order.store === 'north')
  t.same(await eventsOf(store, inStore.length), inStore, 'a store\'s stream has that store\'s orders only')
  // One more event, in no scope but the unscoped one: the scoped streams got nothing else meanwhile.
  await createOrder(app, { customerId: 'cus_3' })
  await eventsOf(all, 6)
  t.equal(customer.messages.length, inCustomer.length)
  t.equal(store.messages.length, inStore.length)
  const list = await post(app, 'getOrderList', {}, { 'x-customer': 'cus_1' })
  t.same(new Set(customer.messages.map(message => (JSON.parse(message.data) as OrderEvent).order.id)), new Set(list.body.items.map((order: { id: string }) => order.id)),
    'the orders a customer\'s stream speaks of are those the customer\'s list shows')
  for (const stream of [all, customer, store]) stream.close()
})

t.test('without Last-Event-ID a stream starts with the events stored after it connected', async t => {
  const app = await buildApp(t, { stream: true })
  await createOrder(app, { customerId: 'before' })
  await waitForEvents(app, 1)
  const stream = await openStream(app)
  const after = await createOrder(app, { customerId: 'after' })
  const [event] = await eventsOf(stream, 1)
  t.equal(event!.order.id, after.id)
  stream.close()
})

t.test('Last-Event-ID or ?after resumes right after that event, nothing skipped or repeated', async t => {
  const app = await buildApp(t, { stream: true })
  for (let i = 0; i < 4; i++) await createOrder(app, { customerId: `cus_${i}` })
  const stored = await waitForEvents(app, 4)
  const byHeader = await openStream(app, { headers: { 'last-event-id': stored[1]!.id } })
  const byQuery = await openStream(app, { query: `?after=${stored[0]!.id}` })
  const both = await openStream(app, { query: `?after=${stored[0]!.id}`, headers: { 'last-event-id': stored[2]!.id } })
  // Written while the resumed streams catch up and join the shared reader.
  for (let i = 4; i < 8; i++) await createOrder(app, { customerId: `cus_${i}` })
  const feed = await waitForEvents(app, 8)
  t.same((await eventsOf(byHeader, 6)).map(event => event.id), feed.slice(2).map(event => event.id))
  t.same((await eventsOf(byQuery, 7)).map(event => event.id), feed.slice(1).map(event => event.id))
  t.same((await eventsOf(both, 5)).map(event => event.id), feed.slice(3).map(event => event.id), 'the header wins over the query')
  await createOrder(app, { customerId: 'last' })
  const last = (await waitForEvents(app, 1, feed[7]!.id))[0]!
  for (const [stream, count] of [[byHeader, 7], [byQuery, 8], [both, 6]] as const) {
    const events = await eventsOf(stream, count)
    t.equal(events.at(-1)!.id, last.id)
    t.equal(new Set(events.map(event => event.id)).size, count, 'no event twice')
    stream.close()
  }
})

t.test('a stream resumed from an older event joins the shared reader with nothing skipped or repeated', async t => {
  const app = await buildApp(t, { stream: true })
  const live = await openStream(app)
  const first = await createOrder(app, { customerId: 'first' })
  const [created] = await eventsOf(live, 1)
  t.equal(created!.order.id, first.id)
  const orders = Array.from({ length: 30 }, (_, i) => i)
  for (const i of orders) await createOrder(app, { customerId: `cus_${i}` })
  await eventsOf(live, 31)
  const resumed = await openStream(app, { headers: { 'last-event-id': created!.id } })
  await createOrder(app, { customerId: 'after' })
  const events = await eventsOf(resumed, 31)
  t.same(events.map(event => event.order.customerId), [...orders.map(i => `cus_${i}`), 'after'])
  await eventsOf(live, 32)
  t.equal(live.messages.at(-1)!.id, resumed.messages.at(-1)!.id)
  live.close()
  resumed.close()
})

t.test('an id the feed no longer has answers event: reset and closes', async t => {
  const app = await buildApp(t, { stream: true })
  for (const lastEventId of ['9b2f8c1e-0d4a-4c3b-8e5f-1a2b3c4d5e6f', 'not-an-event-id']) {
    const stream = await openStream(app, { headers: { 'last-event-id': lastEventId } })
    await stream.ended
    t.equal(stream.status, 200)
    t.same(stream.messages.map(({ id, event }) => ({ id, event })), [{ id: '', event: 'reset' }], lastEventId)
    t.match(JSON.parse(stream.messages[0]!.data), { code: 'ORDER_EVENT_NOT_FOUND' })
  }
})

t.test('a 401 or 403 from the hooks or authorize, and a scope that fails closed, answer before any event', async t => {
  const app = await buildApp(t, {
    stream: true,
    authorize: (request, operation) => {
      t.equal(operation, 'streamEvents')
      if (request.headers['x-bad-scope'] !== undefined) return { customerID: 'cus_1' } as never
      return byHeaders(request, operation)
    },
    hooks: {
      onRequest: async (request, reply) => {
        if (request.headers.authorization === undefined) await reply.code(401).send({ statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: 'sign in' })
      }
    }
  })
  const signedIn = { authorization: 'Bearer x' }
  const cases = [
    [{}, 401, 'UNAUTHORIZED'],
    [{ ...signedIn, 'x-deny': '1' }, 403, 'ORDER_FORBIDDEN'],
    [{ ...signedIn, 'x-bad-scope': '1' }, 500, 'ORDER_INVALID_SCOPE']
  ] as const
  for (const [headers, status, code] of cases) {
    const stream = await openStream(app, { headers })
    await stream.ended
    t.equal(stream.status, status, code)
    t.match(stream.headers['content-type'], /^application\/json/)
    t.equal(JSON.parse(stream.body()).code, code)
  }
  const allowed = await openStream(app, { headers: signedIn })
  t.equal(allowed.status, 200, 'the same stream signed in and allowed')
  allowed.close()
})

t.test('past stream.maxClients open streams the next is 503 ORDER_STREAM_FULL with Retry-After, until one closes', async t => {
  const app = await buildApp(t, { stream: { maxClients: 2 } })
  const one = await openStream(app)
  const two = await openStream(app)
  const full = await openStream(app)
  await full.ended
  t.equal(full.status, 503)
  t.equal(JSON.parse(full.body()).code, 'ORDER_STREAM_FULL')
  t.ok(Number(full.headers['retry-after']) > 0, 'Retry-After in seconds')
  one.close()
  await one.ended
  let three: Stream | undefined
  await eventually('a stream is accepted once one has closed', async () => {
    const stream = await openStream(app)
    if (stream.status === 200) three = stream
    return three !== undefined
  })
  two.close()
  three!.close()
})

t.test('app.close() ends every open stream', async t => {
  const app = await buildApp(t, { stream: true })
  const streams = [await openStream(app), await openStream(app, { query: '?after=9b2f8c1e-0d4a-4c3b-8e5f-1a2b3c4d5e6f' }), await openStream(app)]
  await createOrder(app)
  await eventsOf(streams[0]!, 1)
  await app.close()
  await Promise.all(streams.map(stream => stream.ended))
  t.pass('every stream ended and close returned')
})

t.test('a comment line keeps an idle stream open, at least every heartbeatInterval', async t => {
  const app = await buildApp(t, { stream: { heartbeatInterval: 20 } })
  const stream = await openStream(app)
  const comments = stream.comments
  await eventually('heartbeats on an idle stream', () => stream.comments >= comments + 2)
  t.equal(stream.messages.length, 0, 'comments only: no event')
  stream.close()
})

t.test('events another instance stores on the same database arrive on this one\'s streams', async t => {
  const storage = await testStorage(t)
  const reader = await buildApp(t, { storage, stream: { pollInterval: 20 } })
  const writer = await buildApp(t, { storage })
  const stream = await openStream(reader)
  const order = await createOrder(writer, { customerId: 'elsewhere' })
  await post(writer, 'updateOrderStatus', { id: order.id, status: 'paid' })
  const events = await eventsOf(stream, 2)
  t.same(events.map(event => [event.type, event.order.id]), [['created', order.id], ['statusChanged', order.id]])
  stream.close()
})
