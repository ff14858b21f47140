import t from 'tap'
import { mergePage, precedes, SortedOrders } from '../../../lib/storage/memory/sorted.js'
import { comparePositions } from '../../../lib/orders/position.js'
import type { Order } from '../../../lib/http/schemas.js'
import type { StorageListQuery } from '../../../lib/storage/order-storage.js'

// A small random generator with a seed (mulberry32), so that a failure can be run again.
function random (seed: number) {
  return (below: number) => {
    seed = (seed + 0x6d2b79f5) | 0
    let mixed = Math.imul(seed ^ (seed >>> 15), seed | 1)
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61)
    return ((mixed ^ (mixed >>> 14)) >>> 0) % below
  }
}

/** An order at a place: a few creation times, each shared by several ids, so that ids break ties. */
const orderAt = (n: number, version = 1) => ({
  id: `ord_${String(n).padStart(5, '0')}`,
  createdAt: `2026-01-01T00:00:${String(n % 60).padStart(2, '0')}.000Z`,
  version
}) as unknown as Order

const flat = (sorted: SortedOrders) => sorted.chunks.flat()

t.test('orders put in and taken out anywhere stay in (createdAt, id) order, in chunks of at most the chunk size', async t => {
  const next = random(7)
  const sorted = new SortedOrders(4)
  const held = new Map<number, Order>()
  for (let step = 0; step < 3000; step++) {
    const n = next(400)
    const order = held.get(n)
    // Mostly in, sometimes out, sometimes a new version put in the place of the old.
    if (order === undefined) {
      held.set(n, orderAt(n))
      sorted.insert(held.get(n)!)
    } else if (next(3) === 0) {
      const replaced = orderAt(n, order.version + 1)
      held.set(n, replaced)
      sorted.swap(replaced)
    } else {
      held.delete(n)
      sorted.remove(order)
    }
  }
  t.same(flat(sorted), [...held.values()].sort(comparePositions), 'the orders held, each at its latest version, in order')
  t.ok(held.size > 100, 'with many orders held at the end')
  t.ok(sorted.chunks.every(chunk => chunk.length > 0 && chunk.length <= 4), 'no chunk is empty or over its size')
  for (const n of held.keys()) sorted.remove(held.get(n)!)
  t.same(sorted.chunks, [], 'every order taken out leaves no chunk behind')
})

t.test('orders that come in ascending order fill each chunk before starting the next', async t => {
  const sorted = new SortedOrders(3)
  for (let n = 0; n < 7; n++) sorted.insert(orderAt(n * 60))
  t.same(sorted.chunks.map(chunk => chunk.length), [3, 3, 1])
})

t.test('a page merged from several chunked runs is the matching orders in order, from any cursor and within any created range', async t => {
  const next = random(11)
  // Three runs of interleaved orders, as the runs of three statuses are.
  const runs = [new SortedOrders(3), new SortedOrders(3), new SortedOrders(3)]
  const all: Order[] = []
  for (let n = 0; n < 200; n++) {
    const order = orderAt(n)
    all.push(order)
    runs[next(3)]!.insert(order)
  }
  all.sort(comparePositions)
  const times = ['2026-01-01T00:00:05.000Z', '2026-01-01T00:00:20.000Z', '2026-01-01T00:00:59.000Z', '2026-01-01T00:01:00.000Z', '2025-12-31T00:00:00.000Z']
  const listed: string[][] = []
  const expected: string[][] = []
  for (let round = 0; round < 400; round++) {
    const query: StorageListQuery = { order: next(2) === 0 ? 'asc' : 'desc', limit: 1 + next(30) }
    if (next(2) === 0) query.createdFrom = times[next(times.length)]!
    if (next(2) === 0) query.createdTo = times[next(times.length)]!
    // A cursor at a stored order, or between orders (an id no order has).
    if (next(2) === 0) query.after = next(2) === 0 ? all[next(all.length)]! : { ...all[next(all.length)]!, id: `ord_${next(300)}x` }
    const matching = (query.order === 'asc' ? all : [...all].reverse())
      .filter(order => (query.createdFrom === undefined || order.createdAt >= query.createdFrom) &&
        (query.createdTo === undefined || order.createdAt < query.createdTo) &&
        (query.after === undefined || precedes(query.after, order, query.order)))
      .slice(0, query.limit)
    expected.push(matching.map(({ id }) => `${JSON.stringify(query)} ${id}`))
    listed.push(mergePage([...runs, undefined], query).map(({ id }) => `${JSON.stringify(query)} ${id}`))
  }
  t.same(listed, expected, 'each page lists what a filter over every order gives')
  t.ok(expected.filter(page => page.length > 0).length > 100, 'most of the queries list some orders')
  t.same(mergePage([new SortedOrders()], { order: 'desc', limit: 5 }), [], 'an empty run lists nothing')
})
