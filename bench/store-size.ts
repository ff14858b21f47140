// Page cost by store size on memory storage, through app.orders, and heap bytes per stored order and event.
// Run by bench/run.ts as `node --import tsx --expose-gc bench/store-size.ts [--quick]`.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import type { ListOrdersFilter, NewOrder, OrderStorage } from '../lib/index.js'
import { formatCount, median, printTable } from './report.js'
import { loadPlugin } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
const [small, large] = flags.quick ? [2_000, 20_000] : [2_000, 200_000]
const { orderPlugin, memoryStorage } = await loadPlugin()
const gc = globalThis.gc
if (gc === undefined) throw new Error('run with node --expose-gc')

const CUSTOMERS = 50
const STATUSES = ['pending', 'paid', 'cancelled']
const START = Date.parse('2025-01-01T00:00:00.000Z')
const createdAtOf = (index: number) => new Date(START + index * 1000).toISOString()

async function appWith (storage: OrderStorage, eventRetention?: number) {
  const app = Fastify()
  await app.register(orderPlugin, { storage, eventRetention })
  await app.ready()
  return app
}

/** Stores an order with its created event, as the plugin does. */
function store (storage: OrderStorage, order: NewOrder) {
  return storage.create(order, { id: randomUUID(), type: 'created', at: order.createdAt, order })
}

/**
 * The `index`-th order of the store, one second after the previous one, with the spread of a shop with
 * history: the 30 oldest are shipped (a rare status, at the old end), the rest pending, paid or cancelled;
 * three in five in the store "eu", one in "us", one in none, but the next 30 in "outlet" (a rare store,
 * at the old end).
 */
function orderAt (index: number): NewOrder {
  const createdAt = createdAtOf(index)
  const status = index < 30 ? 'shipped' : STATUSES[index % STATUSES.length]!
  const statusHistory = status === 'pending' ? [{ status, at: createdAt }] : [{ status: 'pending', at: createdAt }, { status, at: createdAt }]
  const store = index >= 30 && index < 60 ? 'outlet' : ['us', undefined, 'eu', 'eu', 'eu'][index % 5]
  return {
    ...store !== undefined && { store },
    id: randomUUID(),
    customerId: `cus_${index % CUSTOMERS}`,
    status,
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
    total: 3490,
    metadata: { channel: 'web' },
    version: statusHistory.length,
    statusHistory,
    createdAt,
    updatedAt: createdAt
  }
}

/**
 * heapUsed growth per order created through app.orders.create (2 items, metadata), after full GCs,
 * with its `changes` events (the create, then moves to paid and shipped); with an eventRetention of
 * 1 ms, events are purged as orders are written, so the orders alone remain.
 */
async function heapPerOrder (count: number, changes = 1, eventRetention?: number): Promise<number> {
  const app = await appWith(memoryStorage(), eventRetention)
  const input = {
    customerId: 'cus_1',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', quantity: 1, unitPrice: 990 }],
    metadata: { channel: 'web', campaign: 'spring' }
  }
  gc!()
  gc!()
  const before = process.memoryUsage().heapUsed
  for (let index = 0; index < count; index++) {
    const { id } = await app.orders.create({ ...input, customerId: `cus_${index % CUSTOMERS}` })
    for (const status of ['paid', 'shipped'].slice(0, changes - 1)) await app.orders.updateStatus({ id, status })
  }
  gc!()
  gc!()
  const after = process.memoryUsage().heapUsed
  await app.close()
  return (after - before) / count
}

const filters: Array<[string, (size: number) => ListOrdersFilter]> = [
  ['no filter', () => ({})],
  ['customer', () => ({ customerId: 'cus_7' })],
  ['a common status', () => ({ status: 'paid' })],
  ['the rare status', () => ({ status: 'shipped' })],
  ['a rare and a common status', () => ({ status: ['shipped', 'cancelled'] })],
  ['created range', size => ({ createdFrom: createdAtOf(Math.floor(size / 4)), createdTo: createdAtOf(Math.floor(size * 3 / 4)) })],
  ['a store', () => ({ store: 'eu' })],
  ['the rare store', () => ({ store: 'outlet' })],
  ['store and a status', () => ({ store: 'us', status: 'paid' })],
  ['store and customer', () => ({ store: 'eu', customerId: 'cus_7' })],
  ['store, customer and a status', () => ({ store: 'eu', customerId: 'cus_7', status: ['pending', 'cancelled'] })]
]
const ORDERS = ['desc', 'asc'] as const

/** Median over batches of the mean time of one `app.orders.list` call, in microseconds. */
async function pageCost (list: () => Promise<unknown>): Promise<number> {
  for (let call = 0; call < 2000; call++) await list()
  const batches: number[] = []
  for (let batch = 0; batch < 25; batch++) {
    const start = process.hrtime.bigint()
    for (let call = 0; call < 100; call++) await list()
    batches.push(Number(process.hrtime.bigint() - start) / 100 / 1000)
  }
  return median(batches)
}

async function pageCosts (): Promise<void> {
  const storage = memoryStorage()
  const app = await appWith(storage)
  const costs = new Map<string, number>()
  let stored = 0
  for (; stored < small; stored++) await store(storage, orderAt(stored))
  // One pass over every query first, so the first one measured is not the one that warms the JIT up.
  for (const [, filterOf] of filters) {
    for (const order of ORDERS) await pageCost(() => app.orders.list({ limit: 20, order, filter: filterOf(small) }))
  }
  for (const size of [small, large]) {
    for (; stored < size; stored++) await store(storage, orderAt(stored))
    for (const [name, filterOf] of filters) {
      for (const order of ORDERS) {
        const query = { limit: 20, order, filter: filterOf(size) }
        const page = await app.orders.list(query)
        if (page.items.length !== 20) throw new Error(`${name} ${order}: expected a full page at ${size} orders`)
        costs.set(`${name} ${order} ${size}`, await pageCost(() => app.orders.list(query)))
      }
    }
  }
  await app.close()
  console.log(`Page cost (limit 20, app.orders.list on memory storage, median µs per page) at ${formatCount(small)} and ${formatCount(large)} stored orders:`)
  const rows = filters.flatMap(([name]) => ORDERS.map(order => {
    const [a, b] = [costs.get(`${name} ${order} ${small}`)!, costs.get(`${name} ${order} ${large}`)!]
    return [name, order, a.toFixed(1), b.toFixed(1), (b / a).toFixed(2)]
  }))
  printTable(['filter', 'order', `µs at ${formatCount(small)}`, `µs at ${formatCount(large)}`, 'ratio'], rows)
}

/** A page of one reference that many customers share (a reference is unique per customer only), at 10,000 and 50,000 of them. */
async function referencePageCosts (): Promise<void> {
  const storage = memoryStorage()
  const app = await appWith(storage)
  const sizes = flags.quick ? [2_000, 10_000] : [10_000, 50_000]
  const costs: number[] = []
  let stored = 0
  for (const size of sizes) {
    for (; stored < size; stored++) await store(storage, { ...orderAt(stored), customerId: `cus_ref_${stored}`, reference: 'cart_shared' })
    const query = { limit: 20, filter: { reference: 'cart_shared' } }
    if ((await app.orders.list(query)).items.length !== 20) throw new Error(`expected a full page at ${size} customers`)
    costs.push(await pageCost(() => app.orders.list(query)))
  }
  await app.close()
  console.log(`Page of one reference shared by ${formatCount(sizes[0]!)} and ${formatCount(sizes[1]!)} customers (limit 20, memory storage): ` +
    `${costs[0]!.toFixed(1)} µs and ${costs[1]!.toFixed(1)} µs, ratio ${(costs[1]! / costs[0]!).toFixed(2)}`)
}

const heapCount = large
const [withEvent, ordersAlone, threeChanges] = [await heapPerOrder(heapCount), await heapPerOrder(heapCount, 1, 1), await heapPerOrder(heapCount, 3)]
console.log(`Heap per stored order on memory storage (${formatCount(heapCount)} orders of 2 items with metadata, created through app.orders): ${formatCount(withEvent)} bytes with its created event`)
console.log(`  ${formatCount(ordersAlone)} bytes with its event purged (eventRetention 1 ms): the created event holds ${formatCount(withEvent - ordersAlone)} bytes`)
console.log(`  ${formatCount(threeChanges)} bytes after two status moves: ${formatCount((threeChanges - withEvent) / 2)} bytes per statusChanged event, with the order version it keeps`)
console.log()
await pageCosts()
console.log()
await referencePageCosts()
