// Durable events under load on two instances while PostgreSQL kills their connections: exactly one event per stored change.
// Run by bench/run.ts (`npm run bench -- --only soak`, needs DATABASE_URL); exits 1 on FAIL.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Order, OrderEvent } from '../lib/index.js'
import { formatCount, printTable } from './report.js'
import { loadPlugin, openClient, openStorage } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false }, seconds: { type: 'string' } } })
if (process.env.DATABASE_URL === undefined) {
  console.error('The soak runs on a PostgreSQL server: set DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test')
  process.exit(1)
}
const SECONDS = Number(flags.seconds ?? (flags.quick ? 8 : 25))
const WORKERS = 16
const TABLE = 'fastify_order_bench_soak'
const APPLICATION = 'fastify-order-soak'
// Every few hundred ms the killer ends up to three of the instances' connections, busy ones first,
// so statements die mid-flight as well as between them.
const KILL_EVERY = [200, 400]
const KEYED_TRIES = 20
const STATUSES = ['paid', 'paid', 'shipped', 'shipped', 'delivered', 'cancelled', 'refunded']
const { orderPlugin } = await loadPlugin()

interface Instance {
  app: FastifyInstance
  url: string
  close: () => Promise<void>
}

/** An app serving the routes on 127.0.0.1 with a pool of its own, tagged with its application_name. */
async function instance (name: string, shared: boolean): Promise<Instance> {
  const opened = await openStorage('postgres', { table: TABLE, applicationName: `${APPLICATION}-${name}`, shared })
  const app = Fastify()
  await app.register(orderPlugin, { storage: opened.storage })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address')
  return { app, url: `http://127.0.0.1:${address.port}`, close: async () => { await app.close(); await opened.close() } }
}

/** A create as the load generator saw it; `attempt` is in the order's metadata, so its stored order can be found. */
interface CreateAttempt {
  attempt: string
  keyed: boolean
  /** The last status answered (0: no answer). */
  status: number
  tries: number
  orderId?: string
}

// The outcomes the check looks for are listed even when none happened.
const counts = new Map<string, number>([
  'failed creates that stored nothing', 'unanswered creates that committed', 'keyed creates retried until answered',
  'keyed creates answered by a replay'
].map(name => [name, 0]))
const count = (name: string, by = 1) => counts.set(name, (counts.get(name) ?? 0) + by)
const creates: CreateAttempt[] = []
const createdIds: string[] = []
const failures: string[] = []
let failureCount = 0
const fail = (message: string) => { if (failureCount++ < 20) failures.push(message) }

async function post (instances: Instance[], route: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: any, replayed: boolean }> {
  const { url } = instances[Math.floor(Math.random() * instances.length)]!
  const response = await fetch(`${url}/order/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body)
  })
  const answer = { status: response.status, body: await response.json(), replayed: response.headers.get('idempotent-replayed') === 'true' }
  count('requests')
  count(`${route} ${answer.status}`)
  if (answer.status >= 500 && answer.status !== 503) fail(`${route} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  return answer
}

const bodyOf = (attempt: string) => ({
  customerId: `cus_${Math.floor(Math.random() * 20)}`,
  currency: 'EUR',
  items: [{ sku: 'A-1', quantity: 1 + Math.floor(Math.random() * 3), unitPrice: 1250 }],
  metadata: { attempt }
})

async function create (instances: Instance[], keyed: boolean): Promise<void> {
  const record: CreateAttempt = { attempt: randomUUID(), keyed, status: 0, tries: 0 }
  creates.push(record)
  const body = bodyOf(record.attempt)
  // A keyed create is retried with the same key and body until it is answered: one order, one event.
  const headers: Record<string, string> = keyed ? { 'idempotency-key': randomUUID() } : {}
  while (record.tries < (keyed ? KEYED_TRIES : 1)) {
    record.tries++
    const { status, body: answer, replayed } = await post(instances, 'createOrder', body, headers)
    record.status = status
    if (status === 201) {
      // A replay: an earlier try committed, but its answer was lost with its connection.
      if (replayed) count('keyed creates answered by a replay')
      record.orderId = answer.id
      createdIds.push(answer.id)
      return
    }
    if (status !== 503 && !(keyed && status === 409)) fail(`createOrder answered ${status}: ${JSON.stringify(answer)}`)
    await sleep(10)
  }
}

async function updateStatus (instances: Instance[]): Promise<void> {
  if (createdIds.length === 0) return
  const id = createdIds[Math.floor(Math.random() * createdIds.length)]!
  const status = STATUSES[Math.floor(Math.random() * STATUSES.length)]!
  const { status: code, body } = await post(instances, 'updateOrderStatus', { id, status })
  // 409: a move the workflow does not allow from the order's status now.
  if (code !== 200 && code !== 409 && code !== 503) fail(`updateOrderStatus answered ${code}: ${JSON.stringify(body)}`)
}

/** Ends up to three of the instances' connections every few hundred ms until `until`; returns how many it ended. */
async function killer (until: number): Promise<number> {
  const { client, close } = await openClient('postgres', `${APPLICATION}-killer`)
  let killed = 0
  try {
    while (Date.now() < until) {
      const { rows } = await client.query(`SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
        WHERE application_name = ANY($1) ORDER BY state = 'active' DESC, random() LIMIT 3`, [[`${APPLICATION}-a`, `${APPLICATION}-b`]])
      killed += rows.filter(row => row.killed === true).length
      await sleep(KILL_EVERY[0]! + Math.random() * (KILL_EVERY[1]! - KILL_EVERY[0]!))
    }
  } finally {
    await close()
  }
  return killed
}

/** Follows the feed from its start through `app.orders.listEvents`, retrying a page the storage failed, until `done()`. */
async function follow (app: FastifyInstance, done: (read: number) => boolean): Promise<string[]> {
  const read: string[] = []
  let after: string | undefined
  while (!done(read.length)) {
    try {
      const { items } = await app.orders.listEvents(after === undefined ? { limit: 100 } : { after, limit: 100 })
      for (const event of items) read.push(event.id)
      if (items.length > 0) after = items[items.length - 1]!.id
      else await sleep(20)
    } catch (err) {
      if ((err as { code?: string }).code !== 'ORDER_STORAGE_UNAVAILABLE') throw err
      count('listEvents 503')
      await sleep(20)
    }
  }
  return read
}

/** Version `version` of a stored order: its status history cut there, as that change stored it. */
function orderAtVersion (order: Order, version: number): Order {
  const change = order.statusHistory[version - 1]!
  return { ...order, status: change.status, version, statusHistory: order.statusHistory.slice(0, version), updatedAt: change.at }
}

/** Checks the stored orders and events against each other and against what the load generator was told. */
function check (orders: Order[], events: Array<{ id: string, aggregatetype: string, aggregateid: string, type: string, payload: string }>): void {
  const byId = new Map(orders.map(order => [order.id, order]))
  const eventsOf = new Map<string, OrderEvent[]>()
  for (const row of events) {
    const event = JSON.parse(row.payload) as OrderEvent
    if (event.id !== row.id || event.type !== row.type || event.order.id !== row.aggregateid || row.aggregatetype !== 'order') {
      fail(`event ${row.id}: its columns disagree with its payload`)
    }
    if (!byId.has(event.order.id)) fail(`event ${event.id} (${event.type}, version ${event.order.version}) of order ${event.order.id}, which is not stored`)
    eventsOf.set(event.order.id, [...eventsOf.get(event.order.id) ?? [], event])
  }
  for (const order of orders) {
    const versions = new Map<number, OrderEvent[]>()
    for (const event of eventsOf.get(order.id) ?? []) versions.set(event.order.version, [...versions.get(event.order.version) ?? [], event])
    if (versions.size !== order.version || [...versions.keys()].some(version => version < 1 || version > order.version)) {
      fail(`order ${order.id} (version ${order.version}) has events of versions ${[...versions.keys()].sort((a, b) => a - b).join(', ')}`)
    }
    for (const [version, found] of versions) {
      if (found.length !== 1) fail(`order ${order.id} has ${found.length} events of version ${version}`)
      const event = found[0]!
      const expected = orderAtVersion(order, version)
      if (event.type !== (version === 1 ? 'created' : 'statusChanged')) fail(`order ${order.id} version ${version}: a ${event.type} event`)
      if (!isDeepStrictEqual(event.order, expected) || event.at !== expected.updatedAt) fail(`order ${order.id} version ${version}: the event's order is not the order as stored`)
      if (event.type === 'statusChanged' && event.from !== order.statusHistory[version - 2]?.status) fail(`order ${order.id} version ${version}: from ${event.from}`)
    }
  }
  const byAttempt = new Map<string, Order[]>()
  for (const order of orders) byAttempt.set(order.metadata.attempt!, [...byAttempt.get(order.metadata.attempt!) ?? [], order])
  const attempts = new Set(creates.map(({ attempt }) => attempt))
  for (const order of orders) if (!attempts.has(order.metadata.attempt!)) fail(`order ${order.id} was stored by no create the load made`)
  for (const { attempt, keyed, status, tries, orderId } of creates) {
    const stored = byAttempt.get(attempt) ?? []
    if (status === 201) {
      if (stored.length !== 1 || stored[0]!.id !== orderId) fail(`a create answered 201 (${orderId}) stored ${stored.length} orders`)
      if (keyed && tries > 1) count('keyed creates retried until answered')
    } else if (stored.length > 1) {
      fail(`a create answered ${status} stored ${stored.length} orders`)
    } else if (stored.length === 1) {
      // The commit reached the server and the connection died before the answer: the change and its
      // event are both stored (checked above), and a client retrying with a key would be given it.
      count('unanswered creates that committed')
    } else {
      count('failed creates that stored nothing')
    }
  }
}

const first = await instance('a', false)
const second = await instance('b', true)
const instances = [first, second]
let killed = 0
let orders: Order[] = []
let events: Array<{ id: string, aggregatetype: string, aggregateid: string, type: string, payload: string }> = []
let followed: string[] = []
const delivered = new Map<string, number>()
try {
  // One subscription shared by both instances: at least once, whoever holds the lease.
  for (const { app } of instances) {
    app.orders.subscribe('soak', event => { delivered.set(event.id, (delivered.get(event.id) ?? 0) + 1) }, { from: 'start', pollInterval: 200 })
  }
  const until = Date.now() + SECONDS * 1000
  // After the load, the reader goes on until it has read every stored event, or for a minute at most.
  let catchUpUntil = Infinity
  let total = Infinity
  const reader = follow(first.app, read => read >= total || Date.now() > catchUpUntil).catch((err: Error) => {
    fail(`the feed reader failed: ${err.message}`)
    return []
  })
  const killing = killer(until)
  await Promise.all(Array.from({ length: WORKERS }, async () => {
    while (Date.now() < until) {
      const dice = Math.random()
      if (dice < 0.35) await create(instances, false)
      else if (dice < 0.6) await create(instances, true)
      else await updateStatus(instances)
    }
  }))
  killed = await killing

  const { client, close } = await openClient('postgres', `${APPLICATION}-check`)
  try {
    orders = (await client.query(`SELECT document::text AS document FROM ${TABLE}`)).rows.map(row => JSON.parse(row.document))
    events = (await client.query(`SELECT id::text AS id, aggregatetype, aggregateid, type, payload::text AS payload FROM ${TABLE}_events ORDER BY tx, seq`)).rows
  } finally {
    await close()
  }
  // The feed lists an event once no older transaction runs anywhere in the database, so catching up may take a while.
  catchUpUntil = Date.now() + 60_000
  total = events.length
  followed = await reader
  for (let wait = 0; delivered.size < total && wait < 600; wait++) await sleep(100)
} finally {
  await second.close()
  await first.close()
}

check(orders, events)
const eventIds = new Set(events.map(({ id }) => id))
if (new Set(followed).size !== followed.length) fail(`the feed reader saw ${followed.length - new Set(followed).size} events twice`)
if (followed.length !== eventIds.size || followed.some(id => !eventIds.has(id))) fail(`the feed reader saw ${followed.length} events of ${eventIds.size}`)
const missed = [...eventIds].filter(id => !delivered.has(id)).length
if (missed > 0) fail(`the subscription did not deliver ${missed} events`)
if ([...delivered.keys()].some(id => !eventIds.has(id))) fail('the subscription delivered an event that is not stored')
const redelivered = [...delivered.values()].reduce((sum, times) => sum + times - 1, 0)

const unavailable = [...counts].filter(([name]) => name.endsWith(' 503')).reduce((sum, [, n]) => sum + n, 0)
console.log(`Soak: ${SECONDS} s of load from ${WORKERS} workers on two instances (two pools, one table) while PostgreSQL ended their connections:`)
printTable(['what', 'count'], [
  ...[...counts].sort(([a], [b]) => a < b ? -1 : 1).map(([name, n]) => [name, formatCount(n)]),
  ['503s (requests and feed reads)', formatCount(unavailable)],
  ['connections killed', formatCount(killed)],
  ['orders stored', formatCount(orders.length)],
  ['events stored', formatCount(events.length)],
  ['events read by listEvents from the start', formatCount(followed.length)],
  ['events delivered to the subscription (redelivered)', `${formatCount(delivered.size)} (${formatCount(redelivered)})`]
])
if (failures.length > 0) {
  console.log(`FAIL (${failureCount} findings${failureCount > failures.length ? `, the first ${failures.length}` : ''}):\n  ${failures.join('\n  ')}`)
  process.exitCode = 1
} else {
  console.log('PASS: every stored change has exactly one event, matching the order as stored; no event without its order or for a failed create; the feed listed every event once; the subscription delivered every event')
}
