// Webhook delivery, one subscription: on memory storage to a local receiver that answers at once, events
// per second through a backlog and the latency from the write to the receiver; then with a receiver
// that takes 50 ms and `concurrency: 32`, events per second through a backlog of 5,000 on memory and on
// each database storage, each event checked delivered once and each order's in order.
// Run by bench/run.ts (`npm run bench -- --only webhooks [--storage pglite|postgres|mysql]`).
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import type { OrderStorage } from '../lib/index.js'
import { formatCount, percentile, printTable } from './report.js'
import { libraryDir, loadPlugin, openStorage, type StorageName } from './storages.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] } }
})
const [BACKLOG, PACED] = flags.quick ? [500, 200] : [5000, 1000]
const { orderPlugin } = await loadPlugin()
const { webhook, webhookRetrySchedule } = await import(new URL('subscriptions/webhooks.js', libraryDir).href) as typeof import('../lib/subscriptions/webhooks.js')
const secret = `whsec_${randomBytes(32).toString('base64')}`
const body = { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] }

/** A receiver that answers 204 at once and calls `received` with each event's order id. */
async function receiver (received: (orderId: string) => void) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', chunk => chunks.push(chunk))
    request.on('end', () => {
      received(JSON.parse(Buffer.concat(chunks).toString('utf8')).data.order.id)
      response.statusCode = 204
      response.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, close: () => server.close() }
}

/** Events per second delivering a backlog of BACKLOG created events, from the subscription's start. */
async function throughput (): Promise<number> {
  let count = 0
  let done: () => void
  const finished = new Promise<void>(resolve => { done = resolve })
  const target = await receiver(() => { if (++count === BACKLOG) done() })
  const app = Fastify()
  await app.register(orderPlugin)
  for (let i = 0; i < BACKLOG; i++) await app.orders.create(body)
  const start = process.hrtime.bigint()
  app.orders.subscribe('bench', webhook({ url: target.url, secret }), { from: 'start' })
  await app.ready()
  await finished
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  await app.close()
  target.close()
  return BACKLOG / seconds
}

/** Milliseconds from each create resolving to the receiver getting its event, one create every 2 ms. */
async function latencies (): Promise<number[]> {
  const written = new Map<string, bigint>()
  const times: number[] = []
  const target = await receiver(orderId => { times.push(Number(process.hrtime.bigint() - written.get(orderId)!) / 1e6) })
  const app = Fastify()
  await app.register(orderPlugin)
  app.orders.subscribe('bench', webhook({ url: target.url, secret }))
  await app.ready()
  for (let i = 0; i < PACED; i++) {
    const order = await app.orders.create(body)
    written.set(order.id, process.hrtime.bigint())
    await sleep(2)
  }
  while (times.length < PACED) await sleep(5)
  await app.close()
  target.close()
  return times
}

// The backlog case: a receiver that takes 50 ms, 32 events in flight.
const SLOW_RECEIVER = 50
const CONCURRENCY = 32
const ORDERS = BACKLOG / 4
const MOVES = ['paid', 'shipped', 'delivered']

/** A receiver that answers 204 after SLOW_RECEIVER ms, and keeps what it got: each order's versions, in arrival order, and each event id. */
async function slowReceiver () {
  const versions = new Map<string, number[]>()
  const ids = new Set<string>()
  let received = 0
  let repeats = 0
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', chunk => chunks.push(chunk))
    request.on('end', () => {
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      received++
      if (ids.has(data.id)) repeats++
      ids.add(data.id)
      versions.set(data.order.id, [...versions.get(data.order.id) ?? [], data.order.version])
      setTimeout(() => { response.statusCode = 204; response.end() }, SLOW_RECEIVER)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    versions,
    received: () => received,
    distinct: () => ids.size,
    repeats: () => repeats,
    close: () => { server.closeAllConnections(); server.close() }
  }
}

/** Events per second through a backlog of ORDERS orders with four events each, and whether each arrived once and in its order's order. */
async function backlog (storage: StorageName): Promise<string[]> {
  const opened = await openStorage(storage, { table: 'fastify_order_bench_webhooks' })
  const writer = Fastify()
  await writer.register(orderPlugin, { storage: opened.storage as OrderStorage })
  // Written by as many concurrent clients as events go out at once, so the feed interleaves orders.
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, client) => {
    for (let i = client; i < ORDERS; i += CONCURRENCY) {
      const order = await writer.orders.create({ ...body, customerId: `cus_${i}` })
      for (const status of MOVES) await writer.orders.updateStatus({ id: order.id, status })
    }
  }))
  const target = await slowReceiver()
  const start = process.hrtime.bigint()
  writer.orders.subscribe('bench', webhook({ url: target.url, secret }), { from: 'start', concurrency: CONCURRENCY, retry: { schedule: webhookRetrySchedule } })
  await writer.ready()
  while (target.distinct() < BACKLOG) await sleep(1)
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  // The status looks at the storage about once a second: then it shows nothing left and nothing set aside.
  while (writer.orders.subscriptions()[0]!.lag.events !== 0) await sleep(50)
  const { deadLetters } = writer.orders.subscriptions()[0]!
  const inOrder = [...target.versions.values()].every(list => list.join() === '1,2,3,4')
  await writer.close()
  await opened.close()
  target.close()
  const eachOnce = target.repeats() === 0 && target.received() === BACKLOG && deadLetters === 0
  return [storage, formatCount(BACKLOG), formatCount(BACKLOG / seconds), eachOnce ? 'yes' : `no (${target.repeats()} repeated, ${deadLetters} dead letters)`, inOrder ? 'yes' : 'no']
}

const perSecond = await throughput()
const times = await latencies()
console.log(`Webhook delivery on memory storage, one subscription, to a local receiver answering 204 at once: ${formatCount(perSecond)} events/s through a backlog of ${formatCount(BACKLOG)}.`)
console.log(`Latency from app.orders.create resolving to the receiver, ${formatCount(PACED)} creates one every 2 ms (ms):`)
printTable(['p50', 'p99', 'max'], [[percentile(times, 50).toFixed(2), percentile(times, 99).toFixed(2), Math.max(...times).toFixed(2)]])

const rows: string[][] = []
for (const storage of ['memory', ...flags.storage] as StorageName[]) rows.push(await backlog(storage))
console.log(`\nA receiver taking ${SLOW_RECEIVER} ms, concurrency: ${CONCURRENCY} (at most ${formatCount(CONCURRENCY * 1000 / SLOW_RECEIVER)} events/s), retry: webhookRetrySchedule; a backlog of ${formatCount(ORDERS)} orders, each created and moved three times:`)
printTable(['storage', 'events', 'events/s', 'each once', 'each order in order'], rows)
