import t from 'tap'
import { memoryStorage, type Order } from '../lib/index.js'

function storedOrder (id: string, createdAt: string): Order {
  return {
    id,
    customerId: 'cus_1',
    status: 'pending',
    currency: 'EUR',
    items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }],
    total: 100,
    metadata: {},
    version: 1,
    statusHistory: [{ status: 'pending', at: createdAt }],
    createdAt,
    updatedAt: createdAt
  }
}

const positionOf = (order: Order) => `${order.createdAt} ${order.id}`

t.test('memoryStorage pages orders by createdAt then id whatever order they were stored in', async t => {
  const storage = memoryStorage()
  const sameMillisecond = '2026-01-01T10:00:00.000Z'
  // Random ids within one millisecond, one order older than all others, and a run of later ones.
  const arrivals = [
    storedOrder('m', sameMillisecond),
    storedOrder('c', sameMillisecond),
    storedOrder('x', sameMillisecond),
    storedOrder('a', '2026-01-01T09:59:59.999Z'),
    ...Array.from({ length: 12 }, (_, index) => storedOrder(`z${String(index).padStart(2, '0')}`, '2026-01-01T10:00:00.001Z')),
    storedOrder('b', sameMillisecond),
    storedOrder('d', '2026-01-01T10:00:00.001Z')
  ]
  for (const order of arrivals) await storage.create(order)

  const expected = arrivals.map(positionOf).sort()
  const asc = await storage.list({ order: 'asc', limit: 100 })
  t.same(asc.map(positionOf), expected)
  const byCustomer = await storage.list({ customerId: 'cus_1', statuses: ['pending'], order: 'desc', limit: 100 })
  t.same(byCustomer.map(positionOf), [...expected].reverse())
})
