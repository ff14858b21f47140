import t from 'tap'
import { memoryStorage, type Order } from '../../../lib/index.js'
import { storedOrder, storeOrder } from '../../helper.js'

const positionOf = (order: Order) => `${order.createdAt} ${order.id}`

t.test('memoryStorage pages orders by createdAt then id whatever order they were stored in', async t => {
  const storage = memoryStorage()
  const sameMillisecond = '2026-01-01T10:00:00.000Z'
  // Random ids within one millisecond, one order older than all others, and a run of later ones.
  const arrivals = [
    storedOrder({ id: 'm', createdAt: sameMillisecond }),
    storedOrder({ id: 'c', createdAt: sameMillisecond }),
    storedOrder({ id: 'x', createdAt: sameMillisecond }),
    storedOrder({ id: 'a', createdAt: '2026-01-01T09:59:59.999Z' }),
    ...Array.from({ length: 12 }, (_, index) => storedOrder({ id: `z${String(index).padStart(2, '0')}`, createdAt: '2026-01-01T10:00:00.001Z' })),
    storedOrder({ id: 'b', createdAt: sameMillisecond }),
    storedOrder({ id: 'd', createdAt: '2026-01-01T10:00:00.001Z' })
  ]
  for (const order of arrivals) await storeOrder(storage, order)

  const expected = arrivals.map(positionOf).sort()
  const asc = await storage.list({ order: 'asc', limit: 100 })
  t.same(asc.map(positionOf), expected)
  const byCustomer = await storage.list({ customerId: 'cus_1', statuses: ['pending'], order: 'desc', limit: 100 })
  t.same(byCustomer.map(positionOf), [...expected].reverse())
})
