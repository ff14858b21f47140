import t from 'tap'
import { codes } from '../../lib/errors.js'
import { decodeCursor, encodeCursor } from '../../lib/orders/cursor.js'
import type { PageFilter } from '../../lib/http/schemas.js'

const filter: PageFilter = { customerId: 'cus_1', statuses: ['paid', 'pending'] }

t.test('a cursor gives back its position, whatever the id holds and however far the date is', async t => {
  const positions = [
    { createdAt: '2026-11-21T20:24:40.724Z', id: '01a1ffc8521400009713336b512237d538cc48edc0b7b9c6' },
    { createdAt: '2026-11-21T20:24:40.724Z', id: 'ord.with.dots\nand a newline "quoted" ✓' },
    { createdAt: '+275760-09-13T00:00:00.000Z', id: 'x' },
    { createdAt: '-271821-04-20T00:00:00.000Z', id: 'x'.repeat(128) }
  ]
  for (const position of positions) t.same(decodeCursor(encodeCursor(position, 'desc', filter), 'desc', filter), position, position.id)
})

t.test('a cursor is bound to its order and canonical filter, field by field', async t => {
  const cursor = encodeCursor({ createdAt: '2026-11-21T20:24:40.724Z', id: 'ord_1' }, 'desc', filter)
  t.throws(() => decodeCursor(cursor, 'asc', filter), codes.ORDER_INVALID_CURSOR, 'another order')
  const others: PageFilter[] = [
    { ...filter, customerId: undefined },
    { ...filter, customerId: 'cus_10' },
    { ...filter, statuses: ['paid'] },
    { ...filter, statuses: ['paidpending'] },
    { ...filter, ids: [] },
    { ...filter, createdFrom: '2026-01-01T00:00:00.000Z' },
    { ...filter, createdTo: '2026-01-01T00:00:00.000Z' },
    { ...filter, number: 1 },
    { ...filter, reference: 'cart_1' }
  ]
  for (const other of others) t.throws(() => decodeCursor(cursor, 'desc', other), codes.ORDER_INVALID_CURSOR, JSON.stringify(other))
})

t.test('a cursor issued before a deploy still reads after it', async t => {
  // Cursors of release 0.1's encoding, for three queries: clients walking pages during a deploy keep going.
  const position = { createdAt: '2026-11-21T20:24:40.724Z', id: 'ord_1' }
  const issued: Array<[string, 'asc' | 'desc', PageFilter]> = [
    ['1.2026-11-21T20:24:40.724Z.0bfww0biwb.ord_1', 'desc', filter],
    ['1.2026-11-21T20:24:40.724Z.dh5bvizysi.ord_1', 'asc', { number: 1042, reference: 'cart_1' }],
    ['1.2026-11-21T20:24:40.724Z.1rd9ffj4qf.ord_1', 'desc', {}]
  ]
  for (const [cursor, order, query] of issued) t.same(decodeCursor(cursor, order, query), position, JSON.stringify(query))
})

t.test('a cursor of a view carries the view, bound to it: another view or a malformed one fails the check', async t => {
  const position = { createdAt: '2026-11-21T20:24:40.724Z', id: 'ord.with.dots' }
  const cursor = encodeCursor(position, 'desc', filter, '7301234567890123456-16/B374D848')
  t.match(cursor, /^2\.7301234567890123456-16\/B374D848\./)
  t.same(decodeCursor(cursor, 'desc', filter), { ...position, view: '7301234567890123456-16/B374D848' })
  t.throws(() => decodeCursor(cursor.replace('16/B374D848', '16/B374D849'), 'desc', filter), codes.ORDER_INVALID_CURSOR, 'another view')
  t.throws(() => decodeCursor(`2.${'x'.repeat(65)}.${cursor.split('.').slice(2).join('.')}`, 'desc', filter), codes.ORDER_INVALID_CURSOR, 'too long a view')
  t.throws(() => decodeCursor(`2.${cursor.split('.').slice(2).join('.')}`, 'desc', filter), codes.ORDER_INVALID_CURSOR, 'no view')
})
