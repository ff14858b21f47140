import t from 'tap'
import { codes } from '../lib/errors.js'
import { decodeCursor, encodeCursor, type NormalizedQuery } from '../lib/cursor.js'

const query: NormalizedQuery = { order: 'desc', customerId: 'cus_1', statuses: ['paid', 'pending'] }

t.test('a cursor gives back its position, whatever the id holds and however far the date is', async t => {
  const positions = [
    { createdAt: '2026-11-21T20:24:40.724Z', id: '01a1ffc8521400009713336b512237d538cc48edc0b7b9c6' },
    { createdAt: '2026-11-21T20:24:40.724Z', id: 'ord.with.dots\nand a newline "quoted" ✓' },
    { createdAt: '+275760-09-13T00:00:00.000Z', id: 'x' },
    { createdAt: '-271821-04-20T00:00:00.000Z', id: 'x'.repeat(128) }
  ]
  for (const position of positions) t.same(decodeCursor(encodeCursor(position, query), query), position, position.id)
})

t.test('a cursor is bound to its normalized query, field by field', async t => {
  const cursor = encodeCursor({ createdAt: '2026-11-21T20:24:40.724Z', id: 'ord_1' }, query)
  const others: NormalizedQuery[] = [
    { ...query, order: 'asc' },
    { ...query, customerId: undefined },
    { ...query, customerId: 'cus_10' },
    { ...query, statuses: ['paid'] },
    { ...query, statuses: ['paidpending'] },
    { ...query, ids: [] },
    { ...query, createdFrom: '2026-01-01T00:00:00.000Z' },
    { ...query, createdTo: '2026-01-01T00:00:00.000Z' }
  ]
  for (const other of others) t.throws(() => decodeCursor(cursor, other), codes.ORDER_INVALID_CURSOR, JSON.stringify(other))
})
