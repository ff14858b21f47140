// The event feed: events read per second through app.orders.listEvents, and a subscription's delivery latency.
// Run by bench/run.ts as `node --import tsx bench/feed.ts [--quick] [--storage pglite|postgres|mysql ...]`.
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import type { OrderEvent } from '../lib/index.js'
import { formatCount, median, percentile, printTable } from './report.js'
import { loadPlugin, openStorage, type StorageName } from './storages.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] } }
})
const storages: StorageName[] = ['memory', ...flags.storage as StorageName[]]
const { orderPlugin } = await loadPlugin()

// PGlite writes about one order a millisecond, so its feed is smaller.
const feedSize = (storage: StorageName) => flags.quick ? 5_000 : storage === 'pglite' ? 20_000 : 50_000
const LATENCY_EVENTS = flags.quick ? 200 : 1_000
// One change every few milliseconds: a steady trickle, so each event's latency is its own, not a queue's.
const WRITE_EVERY = 5
// The subscription's default; the latency of another instance's events depends on it.
const POLL_INTERVAL = 1000
const TABLE = 'fastify_order_bench_feed'
const input = (customer: number) => ({
  customerId: `cus_${customer % 50}`,
  currency: 'EUR',
  items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
  metadata: { channel: 'web', campaign: 'spring' }
})

interface Instance {
  app: FastifyInstance
  close: () => Promise<void>
}

/** An app on the storage; a second PostgreSQL or MySQL instance shares the first one's tables through a pool of its own. */
async function instance (storage: StorageName, name: string, shared = false): Promise<Instance> {
  const opened = await openStorage(storage, { table: TABLE, applicationName: `fastify-order-bench-feed-${name}`, shared })
  const app = Fastify()
  await app.register(orderPlugin, { storage: opened.storage })
  await app.ready()
  return { app, close: async () => { await app.close(); await opened.close() } }
}

/** `count` creates, 32 at a time. */
async function fill (app: FastifyInstance, count: number): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < count) await app.orders.create(input(next++))
  }))
}

/** Walks the feed from its start in pages of `limit`; returns how many events it read. */
async function walk (app: FastifyInstance, limit: number): Promise<number> {
  let read = 0
  let after: string | undefined
  for (;;) {
    const { items } = await app.orders.listEvents(after === undefined ? { limit } : { after, limit })
    if (items.length === 0) return read
    read += items.length
    after = items[items.length - 1]!.id
  }
}

/** Events per second of whole walks in pages of `limit`, the median of three. */
async function readRate (app: FastifyInstance, limit: number, size: number): Promise<number> {
  const rates: number[] = []
  for (let run = 0; run < 3; run++) {
    const start = performance.now()
    const read = await walk(app, limit)
    if (read !== size) throw new Error(`a walk read ${read} events of ${size}`)
    rates.push(read / (performance.now() - start) * 1000)
  }
  return median(rates)
}

/** Waits until the whole feed is listed: on PostgreSQL, once no older transaction runs anywhere in the database. */
async function listed (app: FastifyInstance, size: number): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await walk(app, 1000) === size) return
    await sleep(100)
  }
  throw new Error(`the feed did not list ${size} events within a minute`)
}

/**
 * Writes LATENCY_EVENTS changes through `writer` (a create, then a move to paid), one every WRITE_EVERY ms,
 * and returns each one's latency in ms: from the call's resolving to the subscription's handler on `reader`.
 */
async function latencies (writer: FastifyInstance, delivered: Map<string, number>): Promise<number[]> {
  const committed = new Map<string, number>()
  let created: string | undefined
  for (let step = 0; committed.size < LATENCY_EVENTS; step++) {
    const order = created === undefined
      ? await writer.orders.create(input(step))
      : await writer.orders.updateStatus({ id: created, status: 'paid' })
    committed.set(`${order.id}:${order.version}`, performance.now())
    created = order.version === 1 ? order.id : undefined
    await sleep(WRITE_EVERY)
  }
  for (let wait = 0; [...committed.keys()].some(key => !delivered.has(key)); wait++) {
    if (wait > 300) throw new Error('the subscription did not deliver every event within 30 s')
    await sleep(100)
  }
  // On memory the handler may run before the writer's await resumes: that counts as no wait at all.
  return [...committed].map(([key, at]) => Math.max(0, delivered.get(key)! - at))
}

/** Subscribes on `reader` from now, and waits until it holds the lease. */
async function subscribe (reader: FastifyInstance): Promise<Map<string, number>> {
  const delivered = new Map<string, number>()
  reader.orders.subscribe('bench-latency', (event: OrderEvent) => {
    const key = `${event.order.id}:${event.order.version}`
    if (!delivered.has(key)) delivered.set(key, performance.now())
  }, { pollInterval: POLL_INTERVAL })
  for (let wait = 0; !reader.orders.subscriptions()[0]!.active; wait++) {
    if (wait > 100) throw new Error('the subscription did not take its lease within 10 s')
    await sleep(100)
  }
  return delivered
}

const readRows: string[][] = []
const latencyRows: string[][] = []
const latencyRow = (storage: string, writer: string, values: number[]) => [storage, writer, formatCount(values.length),
  percentile(values, 50).toFixed(1), percentile(values, 99).toFixed(1), Math.max(...values).toFixed(1)]

for (const storage of storages) {
  const reader = await instance(storage, 'a')
  let other: Instance | undefined
  try {
    const size = feedSize(storage)
    await fill(reader.app, size)
    await listed(reader.app, size)
    readRows.push([storage, formatCount(size), formatCount(await readRate(reader.app, 100, size)), formatCount(await readRate(reader.app, 1000, size))])

    const delivered = await subscribe(reader.app)
    latencyRows.push(latencyRow(storage, 'the same instance', await latencies(reader.app, delivered)))
    if (storage === 'postgres' || storage === 'mysql') {
      other = await instance(storage, 'b', true)
      latencyRows.push(latencyRow(storage, 'another instance', await latencies(other.app, delivered)))
    }
  } finally {
    // The second instance first: the first one drops the tables.
    await other?.close()
    await reader.close()
  }
}

console.log('Events read per second (app.orders.listEvents, whole walks of a feed of created events from its start, median of 3):')
printTable(['storage', 'events in the feed', 'pages of 100 (events/s)', 'pages of 1000 (events/s)'], readRows)
console.log()
console.log(`Subscription delivery latency, ms from the create or updateStatus call resolving to the handler (one change every ${WRITE_EVERY} ms, pollInterval ${POLL_INTERVAL} ms; another instance: a second app with a pool of its own on the same tables):`)
printTable(['storage', 'written by', 'events', 'p50', 'p99', 'max'], latencyRows)
