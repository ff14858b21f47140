// Conformance of stores: an order's store and who made each change kept as given, one store's pages, references unique within a store.
import assert from 'node:assert/strict'
import type { Order } from '../../http/schemas.js'
import type { CaseStorage, ConformanceCase } from './case.js'
import {
  CUSTOMERS, INSTANTS, PARALLEL, STATUSES, TIE_IDS, assertCreated, assertWalks, createAll, expectedList, ids, moved, orderOf,
  replaceOrder, show, storeOrder
} from './fixtures.js'

const STORES = ['eu', 'us', undefined] as const

/** 24 orders over 3 customers, 4 statuses, 6 instants and two stores (a third of them in none), stored out of order. */
async function seedStores (storage: CaseStorage): Promise<Order[]> {
  const orders = TIE_IDS.map((id, i) => {
    // Stores cut across customers and statuses, so no other filter stands in for the store.
    const store = STORES[(i >> 2) % STORES.length]
    return orderOf({
      id,
      customerId: CUSTOMERS[i % CUSTOMERS.length],
      status: STATUSES[(i >> 1) % STATUSES.length],
      createdAt: INSTANTS[(i * 5) % INSTANTS.length],
      ...store === undefined ? {} : { store }
    })
  })
  await createAll(storage, orders.map((_, i) => orders[(i * 7) % orders.length]!))
  return orders
}

export const storeCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'orders',
    name: 'an order\'s store and who made each change round-trip through create, get, list and replace',
    async run (storage) {
      const created = '2026-03-04T05:06:07.089Z'
      const stored = orderOf({ store: 'eu-west.2_B', createdAt: created, statusHistory: [{ status: 'pending', at: created, by: 'staff ünïcødé ✓ "7"' }] })
      const plain = orderOf({ createdAt: created })
      for (const order of [stored, plain]) {
        assertCreated(await storeOrder(storage, order), order, 'create')
        assert.deepEqual(await storage.get(order.id), order, 'get must return the store and every entry\'s `by` as created, and no store where there is none')
      }
      assert.deepEqual(await storage.list({ ids: [stored.id, plain.id], order: 'asc', limit: 5 }), [stored, plain].sort((a, b) => a.id < b.id ? -1 : 1))
      const paid = { ...moved(stored, 'paid'), statusHistory: [...stored.statusHistory, { status: 'paid', at: '2026-03-04T05:06:08.000Z', reason: 'card', by: 'job:capture' }] }
      assert.equal(await replaceOrder(storage, structuredClone(paid), 1), true)
      assert.deepEqual(await storage.get(stored.id), paid, 'replace keeps the store and stores the new entry\'s `by`')
      assert.deepEqual(await storage.list({ store: 'eu-west.2_B', order: 'asc', limit: 5 }), [paid])
    }
  },
  {
    capability: 'orders',
    name: 'list by store walks one store\'s orders, alone and with every other filter',
    async run (storage) {
      const orders = await seedStores(storage)
      const some = ['ord_a', 'ord_B', 'ord_Z', 'ord_zz', 'ord_10', 'ord__', 'ord_~', 'ord_unknown']
      await assertWalks(storage, orders, [
        { store: 'eu' },
        { store: 'us' },
        { store: 'missing' },
        { store: 'eu', statuses: ['pending'] },
        { store: 'us', statuses: ['paid', 'cancelled', 'refunded'] },
        { store: 'eu', customerId: CUSTOMERS[1] },
        { store: 'us', customerId: CUSTOMERS[2], statuses: ['pending', 'shipped'] },
        { store: 'eu', createdFrom: INSTANTS[1], createdTo: INSTANTS[5] },
        { store: 'us', customerId: CUSTOMERS[0], createdFrom: INSTANTS[2] },
        { store: 'eu', ids: some },
        { store: 'us', ids: some, statuses: ['pending', 'cancelled'] }
      ])
      // A number names one order: another store's, or one of none, is not found under a store.
      for (const order of [orders[0]!, orders[4]!, orders[9]!]) {
        for (const store of ['eu', 'us']) {
          const query = { number: order.number, store, order: 'desc' as const }
          assert.deepEqual(ids(await storage.list({ ...query, limit: 5 })), expectedList(orders, query), show(query))
        }
      }
    }
  },
  {
    capability: 'orders',
    name: 'a reference is unique per customer within a store; orders without a store count as one more store',
    async run (storage) {
      const first = orderOf({ reference: 'cart_1', store: 'eu', createdAt: INSTANTS[1] })
      assertCreated(await storeOrder(storage, first), first, 'the first create with the reference')
      assert.deepEqual(await storeOrder(storage, orderOf({ reference: 'cart_1', store: 'eu' })), { created: false, referenceTaken: true },
        'the same customer, reference and store')
      const others = [
        orderOf({ reference: 'cart_1', store: 'us', createdAt: INSTANTS[2] }),
        orderOf({ reference: 'cart_1', createdAt: INSTANTS[3] }),
        orderOf({ reference: 'cart_1', store: 'eu', customerId: 'cus_other', createdAt: INSTANTS[4] })
      ]
      for (const order of others) assertCreated(await storeOrder(storage, order), order, `the reference in another store, or for another customer: ${show({ store: order.store, customerId: order.customerId })}`)
      assert.deepEqual(await storeOrder(storage, orderOf({ reference: 'cart_1' })), { created: false, referenceTaken: true },
        'orders without a store are one store: the reference is taken there too')
      const orders = [first, ...others]
      for (const filter of [
        { reference: 'cart_1' }, { reference: 'cart_1', customerId: 'cus_42' }, { reference: 'cart_1', store: 'eu' },
        { reference: 'cart_1', customerId: 'cus_42', store: 'us' }, { reference: 'cart_1', customerId: 'cus_other', store: 'us' }
      ]) {
        for (const order of ['asc', 'desc'] as const) {
          const query = { ...filter, order }
          assert.deepEqual(ids(await storage.list({ ...query, limit: 10 })), expectedList(orders, query), show(query))
        }
      }
      // At once, in two stores: exactly one order in each.
      const racing = Array.from({ length: PARALLEL }, (_, i) => orderOf({ reference: 'cart_race', store: i % 2 === 0 ? 'eu' : 'us' }))
      const results = await Promise.all(racing.map(order => storeOrder(storage, order)))
      assert.ok(results.every(result => result.created || 'referenceTaken' in result), 'the others are told the reference is taken')
      const won = racing.filter((_, i) => results[i]!.created).map(order => order.store).sort()
      assert.deepEqual(won, ['eu', 'us'], 'one order per store')
    }
  }
])
