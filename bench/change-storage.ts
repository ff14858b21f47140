// The storage's part of a change after placement on each database storage: replace with a changed event (the order as a
// change of two actions leaves it), without and with the change's idempotency claim, against replace with a move's statusChanged event.
// Run by bench/run.ts as `node --import tsx bench/change-storage.ts [--quick] [--storage pglite|postgres|mysql ...]`.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import type { OrderChangedEvent, OrderStatusChangedEvent } from '../lib/feed/events.js'
import type { Order } from '../lib/index.js'
import type { OrderStorage } from '../lib/storage/order-storage.js'
import { formatCount, median, printTable } from './report.js'
import { openStorage, type StorageName } from './storages.js'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, storage: { type: 'string', multiple: true, default: [] }, rounds: { type: 'string' } }
})
const storages = flags.storage as StorageName[]
const rounds = Number(flags.rounds ?? (flags.quick ? 4 : 10))
// Replaces per round of each kind, ten at a time, as ten connections of a route would send them.
const perRound = flags.quick ? 500 : 1_500
const CONCURRENCY = 10
const DAY = '2026-01-01T10:00:00.000Z'
const LATER = '2026-01-01T10:00:01.000Z'

/** A placed order as the plugin stores it, with changes on. */
function placed (): Order {
  return {
    id: `ord_${randomUUID()}`,
    number: 0,
    customerId: `cus_${Math.floor(Math.random() * 500)}`,
    status: 'pending',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-2', name: 'Plate', quantity: 1, unitPrice: 900 }],
    total: 3400,
    metadata: {},
    version: 1,
    statusHistory: [{ status: 'pending', at: DAY }],
    createdAt: DAY,
    updatedAt: DAY,
    ...{ paid: 0, balance: 3400, payments: [], changes: [] }
  } as Order
}

/** A move pending → paid, as updateOrderStatus replaces the order. */
function move (order: Order): [Order, OrderStatusChangedEvent] {
  const after = { ...order, status: 'paid', version: 2, statusHistory: [...order.statusHistory, { status: 'paid', at: LATER }], updatedAt: LATER }
  return [after, { id: randomUUID(), type: 'statusChanged', at: LATER, order: after, from: 'pending' }]
}

/** A change of two actions (one mug fewer, and a payment), as changeOrder replaces the order. */
function change (order: Order): [Order, OrderChangedEvent] {
  const actions = [{ type: 'cancelItem', index: 0, quantity: 1 }, { type: 'recordPayment', amount: 2150, reference: `pay_${order.id}` }]
  const record = { version: 2, at: LATER, actions, totalBefore: 3400, totalAfter: 2150 }
  const after = {
    ...order,
    items: [{ ...order.items[0]!, cancelled: 1 }, order.items[1]!],
    total: 2150,
    paid: 2150,
    balance: 0,
    payments: [{ kind: 'payment', amount: 2150, reference: `pay_${order.id}`, at: LATER }],
    changes: [record],
    version: 2,
    updatedAt: LATER
  } as Order
  return [after, { id: randomUUID(), type: 'changed', at: LATER, order: after, change: record }]
}

const KINDS = ['move', 'change', 'claimed'] as const
type Kind = typeof KINDS[number]

/** Replaces per second of `orders`, each once, ten at a time: moves, changes, or changes with a claim of their key. */
async function replaceAll (storage: OrderStorage, orders: Order[], kind: Kind): Promise<number> {
  const queue = [...orders]
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let order = queue.pop(); order !== undefined; order = queue.pop()) {
      const [after, event] = kind === 'move' ? move(order) : change(order)
      const claim = kind === 'claimed' ? { key: `change:${order.id}`, fingerprint: 'f', expiresAt: '2100-01-01T00:00:00.000Z' } : undefined
      if (!await storage.replace(after, 1, event, claim)) throw new Error(`a ${kind} was not stored`)
    }
  }))
  return orders.length / ((performance.now() - started) / 1000)
}

const results: string[][] = []
for (const name of storages) {
  const { storage, close } = await openStorage(name, { table: 'fastify_order_bench_change' })
  try {
    await storage.init?.()
    const ratios = { change: [] as number[], claimed: [] as number[] }
    const rates = { move: [] as number[], change: [] as number[], claimed: [] as number[] }
    for (let round = 0; round <= rounds; round++) {
      const orders = { move: [] as Order[], change: [] as Order[], claimed: [] as Order[] }
      for (const kind of KINDS) {
        for (let i = 0; i < perRound; i++) {
          const order = placed()
          const { number: _, ...unnumbered } = order
          const created = await storage.create(unnumbered, { id: randomUUID(), type: 'created', at: DAY, order: unnumbered })
          if (!created.created) throw new Error('an order was not created')
          orders[kind].push(created.order)
        }
      }
      // Reversed every other round, so none always runs on the warmer table; round 0 warms up.
      const rate = { move: 0, change: 0, claimed: 0 }
      for (const kind of round % 2 === 0 ? KINDS : [...KINDS].reverse()) rate[kind] = await replaceAll(storage, orders[kind], kind)
      if (round === 0) continue
      for (const kind of KINDS) rates[kind].push(rate[kind])
      ratios.change.push(rate.change / rate.move)
      ratios.claimed.push(rate.claimed / rate.move)
      console.log(`  ${name} round ${round}: move ${formatCount(rate.move)}/s, change ${formatCount(rate.change)}/s, change with claim ${formatCount(rate.claimed)}/s`)
    }
    results.push([name, ...KINDS.map(kind => formatCount(median(rates[kind]))), median(ratios.change).toFixed(2), median(ratios.claimed).toFixed(2)])
  } finally {
    await close()
  }
}
console.log(`The storage's part of a change (replace, ${CONCURRENCY} at a time, ${formatCount(perRound)} of each kind a round, median of ${rounds} rounds):`)
printTable(['storage', 'move (statusChanged)/s', 'change of two actions/s', 'the change with its claim/s', 'change / move (median)', 'with claim / move (median)'], results)
