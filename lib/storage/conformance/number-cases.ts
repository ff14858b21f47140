// Conformance of order numbers and references: chosen and kept by the storage, unique, found by filter.
import assert from 'node:assert/strict'
import type { Order } from '../../http/schemas.js'
import type { ConformanceCase } from './case.js'
import { CUSTOMERS, INSTANTS, PARALLEL, STATUSES, assertWalks, claimOf, createAll, expectedList, ids, orderOf, show, storeOrder } from './fixtures.js'

/** 18 orders over 3 customers, 4 statuses and 6 instants; references shared across customers, some orders without one. */
async function seedReferences (storage: Parameters<ConformanceCase['run']>[0]): Promise<Order[]> {
  const orders = Array.from({ length: 18 }, (_, i) => orderOf({
    customerId: CUSTOMERS[i % CUSTOMERS.length],
    status: STATUSES[(i >> 1) % STATUSES.length],
    createdAt: INSTANTS[(i * 5) % INSTANTS.length],
    // Each customer has at most one order per reference; `ref_0` and `ref_1` are every customer's.
    ...i % 4 === 3 ? {} : { reference: `ref_${Math.floor(i / CUSTOMERS.length) % 3}` }
  }))
  await createAll(storage, orders.filter(order => order.reference === undefined || orders.find(other =>
    other.customerId === order.customerId && other.reference === order.reference) === order))
  return orders.filter(order => order.number > 0)
}

export const numberCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'orders',
    name: 'create chooses each order\'s number: positive, unique, growing with each create, kept by get, list and replays',
    async run (storage) {
      const sequential = Array.from({ length: 5 }, () => orderOf())
      await createAll(storage, sequential)
      const numbers = sequential.map(order => order.number)
      assert.deepEqual([...numbers].sort((a, b) => a - b), numbers, `each create gets a larger number than the one before: ${numbers}`)
      const parallel = Array.from({ length: PARALLEL }, () => orderOf())
      await Promise.all(parallel.map(order => storeOrder(storage, order)))
      const all = [...sequential, ...parallel].map(order => order.number)
      assert.equal(new Set(all).size, all.length, `concurrent creates get distinct numbers: ${all}`)
      assert.ok(parallel.every(order => order.number > numbers.at(-1)!), 'later creates get larger numbers')
      for (const order of sequential) assert.deepEqual(await storage.get(order.id), order, 'get returns the order with its number')
      assert.deepEqual(await storage.list({ ids: ids(sequential), order: 'asc', limit: 10 }), [...sequential].sort((a, b) => a.id < b.id ? -1 : 1),
        'list returns the orders with their numbers')
      const keyed = orderOf()
      await storeOrder(storage, keyed, claimOf('key-number'))
      const replay = await storeOrder(storage, orderOf(), claimOf('key-number'))
      assert.ok(!replay.created && 'order' in replay && replay.order.number === keyed.number, 'a replay returns the first order, number included')
    }
  },
  {
    capability: 'orders',
    name: 'list finds an order by number, alone and with every other filter',
    async run (storage) {
      const orders = await seedReferences(storage)
      const target = orders[7]!
      const other = orders[8]!
      const filters = [
        { number: target.number },
        { number: target.number, customerId: target.customerId },
        { number: target.number, customerId: other.customerId },
        { number: target.number, statuses: [target.status] },
        { number: target.number, statuses: [STATUSES.find(status => status !== target.status)!] },
        { number: target.number, ids: [target.id, other.id] },
        { number: target.number, ids: [other.id] },
        { number: target.number, reference: 'no such reference' },
        { number: Math.max(...orders.map(order => order.number)) + 1000 }
      ]
      for (const filter of filters) {
        const query = { ...filter, order: 'desc' as const }
        const found = await storage.list({ ...query, limit: 10 })
        assert.deepEqual(found.map(order => order.id), expectedList(orders, query), show(query))
      }
    }
  },
  {
    capability: 'orders',
    name: 'a reference is unique per customer: a second create stores nothing, not even its claim',
    async run (storage) {
      const first = orderOf({ reference: 'cart_1' })
      await storeOrder(storage, first)
      const second = orderOf({ reference: 'cart_1', createdAt: INSTANTS[3] })
      assert.deepEqual(await storeOrder(storage, second, claimOf('key-taken')), { created: false, referenceTaken: true })
      assert.equal(await storage.get(second.id), undefined, 'no second order')
      assert.deepEqual((await storage.list({ order: 'asc', limit: 10 })).map(order => order.id), [first.id])
      const retried = orderOf({ reference: 'cart_2' })
      assert.equal((await storeOrder(storage, retried, claimOf('key-taken'))).created, true, 'the refused create claimed no key')
      const elsewhere = orderOf({ customerId: 'cus_other', reference: 'cart_1' })
      assert.equal((await storeOrder(storage, elsewhere)).created, true, 'another customer may use the same reference')
      // A replay of a live claim answers before the reference is checked.
      const replay = await storeOrder(storage, orderOf({ reference: 'cart_1' }), claimOf('key-taken'))
      assert.ok(!replay.created && 'order' in replay && replay.order.id === retried.id, 'a live claim still answers with its order')
    }
  },
  {
    capability: 'orders',
    name: 'concurrent creates with one customer\'s reference store exactly one order',
    async run (storage) {
      const orders = Array.from({ length: PARALLEL }, () => orderOf({ reference: 'cart_race' }))
      const results = await Promise.all(orders.map(order => storeOrder(storage, order)))
      assert.equal(results.filter(result => result.created).length, 1, 'one created')
      assert.ok(results.every(result => result.created || 'referenceTaken' in result), 'the others are told the reference is taken')
      assert.equal((await storage.list({ reference: 'cart_race', order: 'asc', limit: 10 })).length, 1)
    }
  },
  {
    capability: 'orders',
    name: 'list by reference walks every customer\'s orders with it, or one customer\'s, in page order',
    async run (storage) {
      const orders = await seedReferences(storage)
      await assertWalks(storage, orders, [
        { reference: 'ref_0' },
        { reference: 'ref_1', statuses: ['pending', 'shipped'] },
        { reference: 'ref_0', customerId: CUSTOMERS[1] },
        { reference: 'ref_2', customerId: CUSTOMERS[0], statuses: ['paid'] },
        { reference: 'ref_1', createdFrom: INSTANTS[1], createdTo: INSTANTS[4] },
        { reference: 'ref_0', ids: orders.slice(0, 9).map(order => order.id) },
        { reference: 'missing' }
      ])
    }
  }
])
