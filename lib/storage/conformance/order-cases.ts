// Conformance of OrderStore: create with idempotency claims, get, keyset pages, compare-and-set replace.
import assert from 'node:assert/strict'
import { comparePositions, type OrderPosition } from '../../orders/position.js'
import type { ConformanceCase } from './case.js'
import { CUSTOMERS, DAY, FAR_FUTURE, INSTANTS, LATER, PARALLEL, TIE_IDS, assertCreated, assertWalks, claimOf, createAll, expectedList, ids, moved, orderOf, positionOf, replaceOrder, seedListOrders, show, storeOrder, type ListFilter } from './fixtures.js'

export const orderCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'orders',
    name: 'get returns the created order unchanged',
    async run (storage) {
      const plain = orderOf({ createdAt: '2026-03-04T05:06:07.089Z' })
      const rich = orderOf({
        customerId: 'cus_ünïcødé ✓ "quoted" \\ \'single\'',
        currency: 'JPY',
        items: [
          { sku: 'A-1', name: 'Mug 😀', quantity: 9000, unitPrice: 1e12 },
          { sku: 'B-2', quantity: 1, unitPrice: 0 }
        ],
        // Above 2^32 and near Number.MAX_SAFE_INTEGER: a 32-bit column or a float would change it.
        total: 9000 * 1e12,
        // Keys that are special to JavaScript objects are data like any other.
        metadata: JSON.parse('{"__proto__":"x","constructor":"y","channel":"web","empty":""}'),
        status: 'shipped',
        version: 3,
        statusHistory: [
          { status: 'pending', at: '2026-03-04T05:06:07.089Z' },
          { status: 'paid', at: '2026-03-04T05:06:08.000Z', reason: 'card ✓' },
          { status: 'shipped', at: '2026-03-04T05:06:09.000Z' }
        ],
        createdAt: '2026-03-04T05:06:07.089Z',
        updatedAt: '2026-03-04T05:06:09.000Z'
      })
      for (const order of [plain, rich]) {
        assertCreated(await storeOrder(storage, order), order, 'create')
        assert.deepEqual(await storage.get(order.id), order, 'get must return the order as created, timestamps as the same ISO strings')
      }
    }
  },
  {
    capability: 'orders',
    name: 'what a storage hands out is never what it keeps: an edit of a created, got or listed order changes nothing stored',
    async run (storage) {
      const order = orderOf({ metadata: { channel: 'web' } })
      const created = await storeOrder(storage, order)
      const handed = [(created as { order: typeof order }).order, await storage.get(order.id), ...await storage.list({ order: 'desc', limit: 10 })]
      // A host's hook or listener may edit what it is handed (a storage may hand out frozen objects: then the edit fails, which is fine too).
      for (const copy of handed) {
        Reflect.set(copy!.items, 'length', 0)
        Reflect.set(copy!.metadata, 'channel', 'edited')
        for (const [key, value] of Object.entries({ status: 'lost', items: [], metadata: {} })) Reflect.set(copy!, key, value)
      }
      assert.notEqual(await storage.get(order.id), await storage.get(order.id), 'each get must hand out a new object')
      assert.deepEqual(await storage.get(order.id), order, 'the stored order must be as created, whatever was done to the objects handed out')
    }
  },
  {
    capability: 'orders',
    name: 'get of an unknown id returns undefined',
    async run (storage) {
      await createAll(storage, [orderOf()])
      assert.equal(await storage.get('ord_unknown'), undefined)
      assert.equal(await storage.get(''), undefined)
    }
  },
  {
    capability: 'orders',
    name: 'a claimed idempotency key returns the first order and its fingerprint',
    async run (storage) {
      const first = orderOf()
      const second = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, first, claimOf('key-1', 'fingerprint-1')), first, 'the first create with a key')
      const replay = await storeOrder(storage, second, claimOf('key-1', 'fingerprint-2'))
      assert.deepEqual(replay, { created: false, order: first, fingerprint: 'fingerprint-1' },
        'a create with a claimed key must return the first order and the first fingerprint')
      assert.equal(await storage.get(second.id), undefined, 'a create with a claimed key must store nothing')
      const other = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, other, claimOf('key-2', 'fingerprint-1')), other, 'a create with another key')
    }
  },
  {
    capability: 'orders',
    name: 'parallel creates with one idempotency key store exactly one order',
    async run (storage) {
      const orders = Array.from({ length: PARALLEL }, () => orderOf())
      const results = await Promise.all(orders.map((order, i) =>
        storeOrder(storage, order, claimOf('key-parallel', `fingerprint-${i}`))))
      const winners = results.flatMap((result, i) => result.created ? [i] : [])
      assert.equal(winners.length, 1, `exactly one of ${PARALLEL} parallel creates with one key must store its order`)
      const winner = winners[0]!
      for (const result of results) {
        if (result.created || 'inProgress' in result) continue
        assert.deepEqual(result, { created: false, order: orders[winner], fingerprint: `fingerprint-${winner}` },
          'every other parallel create must return the stored order and its fingerprint (or inProgress)')
      }
      const stored = await storage.list({ ids: orders.map(order => order.id), order: 'asc', limit: PARALLEL + 1 })
      assert.deepEqual(stored, [orders[winner]], 'only the winning order is stored')
      // Once the winner has returned, its order is readable under the key.
      const again = await storeOrder(storage, orderOf(), claimOf('key-parallel', 'fingerprint-again'))
      assert.deepEqual(again, { created: false, order: orders[winner], fingerprint: `fingerprint-${winner}` })
    }
  },
  {
    capability: 'orders',
    name: 'an expired idempotency claim frees its key',
    async run (storage) {
      const first = orderOf({ createdAt: DAY })
      await storeOrder(storage, first, claimOf('key-ttl', 'fingerprint-1', LATER))
      const early = orderOf({ createdAt: DAY })
      assert.deepEqual(await storeOrder(storage, early, claimOf('key-ttl', 'fingerprint-2', FAR_FUTURE)),
        { created: false, order: first, fingerprint: 'fingerprint-1' }, 'a claim expiring after createdAt still holds')
      // expiresAt equal to the new order's createdAt counts as expired.
      const second = orderOf({ createdAt: LATER })
      assertCreated(await storeOrder(storage, second, claimOf('key-ttl', 'fingerprint-2', FAR_FUTURE)), second,
        'a create whose createdAt is at or after the claim\'s expiresAt')
      const third = orderOf({ createdAt: INSTANTS[5] })
      assert.deepEqual(await storeOrder(storage, third, claimOf('key-ttl', 'fingerprint-3')),
        { created: false, order: second, fingerprint: 'fingerprint-2' }, 'the key now belongs to the new order')
      assert.deepEqual(await storage.get(first.id), first, 'expiry frees the key, never the order')
    }
  },
  {
    capability: 'orders',
    name: 'list with an empty list of statuses or ids matches nothing',
    async run (storage) {
      await createAll(storage, [orderOf(), orderOf({ status: 'paid' })])
      assert.deepEqual(await storage.list({ statuses: [], order: 'asc', limit: 10 }), [])
      assert.deepEqual(await storage.list({ ids: [], order: 'desc', limit: 10 }), [])
    }
  },
  {
    capability: 'orders',
    name: 'an id that is not a string is never coerced into one',
    async run (storage) {
      // Customer "1234" and its JSON-escaped twin "23": a number must find neither.
      const orders = [orderOf({ customerId: '1234' }), orderOf({ customerId: '23' }), orderOf({ id: '1234' })]
      await createAll(storage, orders)
      // The same filters as strings find their orders: a list that fails every query cannot pass here.
      assert.deepEqual(ids(await storage.list({ customerId: '1234', order: 'asc', limit: 10 })), [orders[0]!.id])
      assert.deepEqual(ids(await storage.list({ ids: ['1234'], order: 'asc', limit: 10 })), [orders[2]!.id])
      for (const query of [{ customerId: 1234 }, { ids: [1234] }, { customerId: 1234, statuses: ['pending'] }]) {
        let found: unknown[] = []
        try {
          found = await storage.list({ ...query as object, order: 'asc', limit: 10 })
        } catch (err) {
          assert.ok(err instanceof TypeError, `list(${show(query)}) may refuse a number with a TypeError, not ${String(err)}`)
        }
        assert.deepEqual(found, [], `list(${show(query)}) must refuse a number or find nothing`)
      }
    }
  },
  {
    capability: 'orders',
    name: 'purgeIdempotencyKeys deletes expired keys a bounded batch at a time, and no live one',
    async run (storage) {
      const orders = [orderOf(), orderOf(), orderOf()]
      await storeOrder(storage, orders[0]!, claimOf('purge-1', 'fingerprint-1', LATER))
      await storeOrder(storage, orders[1]!, claimOf('purge-2', 'fingerprint-2', LATER))
      await storeOrder(storage, orders[2]!, claimOf('purge-3', 'fingerprint-3', FAR_FUTURE))
      assert.equal(await storage.purgeIdempotencyKeys(DAY, 10), 0, 'no key has expired yet')
      assert.equal(await storage.purgeIdempotencyKeys(LATER, 1), 1, 'at most limit keys, expired at or before now')
      assert.equal(await storage.purgeIdempotencyKeys(LATER, 10), 1, 'then the rest of the expired ones')
      assert.equal(await storage.purgeIdempotencyKeys(LATER, 10), 0, 'each once')
      assert.deepEqual(await storeOrder(storage, orderOf(), claimOf('purge-3', 'fingerprint-4')),
        { created: false, order: orders[2], fingerprint: 'fingerprint-3' }, 'a live key still holds')
      for (const order of orders) assert.deepEqual(await storage.get(order.id), order, 'purging keys never touches orders')
    }
  },
  {
    capability: 'orders',
    name: 'replace stores the order when the expected version is current',
    async run (storage) {
      const order = orderOf()
      const bystander = orderOf()
      await createAll(storage, [order, bystander])
      const paid = moved(order, 'paid')
      assert.equal(await replaceOrder(storage, structuredClone(paid), 1), true)
      assert.deepEqual(await storage.get(order.id), paid)
      const shipped = moved(paid, 'shipped')
      assert.equal(await replaceOrder(storage, structuredClone(shipped), 2), true)
      assert.deepEqual(await storage.get(order.id), shipped)
      // A replace may keep the status: the whole order is replaced all the same.
      const annotated = { ...shipped, version: 4, metadata: { note: 'kept status' }, updatedAt: FAR_FUTURE }
      assert.equal(await replaceOrder(storage, structuredClone(annotated), 3), true)
      assert.deepEqual(await storage.get(order.id), annotated)
      assert.deepEqual(await storage.list({ statuses: ['shipped'], order: 'asc', limit: 10 }), [annotated])
      assert.deepEqual(await storage.get(bystander.id), bystander, 'replace touches only the order with that id')
    }
  },
  {
    capability: 'orders',
    name: 'replace with a stale expected version changes nothing',
    async run (storage) {
      const order = orderOf()
      await createAll(storage, [order])
      assert.equal(await replaceOrder(storage, moved(order, 'paid'), 2), false, 'a version ahead of the stored one')
      assert.deepEqual(await storage.get(order.id), order)
      const paid = moved(order, 'paid')
      await replaceOrder(storage, structuredClone(paid), 1)
      assert.equal(await replaceOrder(storage, moved(order, 'cancelled'), 1), false, 'a version behind the stored one')
      assert.deepEqual(await storage.get(order.id), paid)
      assert.equal(await replaceOrder(storage, orderOf({ id: 'ord_unknown' }), 1), false, 'an unknown id')
      assert.equal(await storage.get('ord_unknown'), undefined, 'replace never creates an order')
    }
  },
  {
    capability: 'orders',
    name: 'parallel replaces from one version: exactly one wins',
    async run (storage) {
      const order = orderOf()
      await createAll(storage, [order])
      const candidates = Array.from({ length: PARALLEL }, (_, i) => moved(order, i % 2 === 0 ? 'paid' : 'cancelled', `writer ${i}`))
      const results = await Promise.all(candidates.map(candidate => replaceOrder(storage, structuredClone(candidate), 1)))
      const winners = results.flatMap((replaced, i) => replaced ? [i] : [])
      assert.equal(winners.length, 1, `exactly one of ${PARALLEL} parallel replaces from version 1 must win`)
      assert.deepEqual(await storage.get(order.id), candidates[winners[0]!], 'the stored order is the winner\'s')
    }
  },
  {
    capability: 'orders',
    name: 'list walks all orders by (createdAt, id) in both orders',
    async run (storage) {
      const orders = await seedListOrders(storage)
      await assertWalks(storage, orders, [{}])
      const pages = await storage.list({ order: 'desc', limit: 1000 })
      assert.deepEqual(pages, expectedList(orders, { order: 'desc' }).map(id => orders.find(order => order.id === id)),
        'list returns whole orders')
    }
  },
  {
    capability: 'orders',
    name: 'list applies every filter, alone and combined',
    async run (storage) {
      const orders = await seedListOrders(storage)
      const someIds = ['ord_a', 'ord_B', 'ord_Z', 'ord_zz', 'ord_10', 'ord__', 'ord_unknown']
      await assertWalks(storage, orders, [
        { customerId: 'cus_a' },
        { customerId: 'cus_unknown' },
        { statuses: ['paid'] },
        { statuses: ['shipped', 'pending'] },
        { statuses: ['refunded'] },
        { ids: someIds },
        { ids: ['ord_unknown'] },
        { createdFrom: DAY },
        { createdTo: INSTANTS[3] },
        { createdFrom: DAY, createdTo: INSTANTS[4] },
        { createdFrom: INSTANTS[3], createdTo: INSTANTS[3] },
        { customerId: 'cus_b', statuses: ['pending', 'paid'] },
        { customerId: 'cus_c', statuses: ['cancelled', 'shipped'], createdFrom: LATER, createdTo: INSTANTS[5] },
        { ids: someIds, statuses: ['pending', 'cancelled'] },
        { ids: someIds, customerId: 'cus_a', createdFrom: DAY }
      ])
    }
  },
  {
    capability: 'orders',
    name: 'list starts strictly after the given position',
    async run (storage) {
      const orders = await seedListOrders(storage)
      const positions: OrderPosition[] = [
        ...orders.slice(0, 6).map(positionOf),
        { createdAt: DAY, id: '' },
        { createdAt: DAY, id: 'ord_unknown' },
        { createdAt: '2000-01-01T00:00:00.000Z', id: 'ord_a' },
        { createdAt: FAR_FUTURE, id: 'ord_a' }
      ]
      const filters: ListFilter[] = [{}, { statuses: ['paid', 'pending'] }, { customerId: 'cus_b' }, { ids: TIE_IDS.slice(0, 12) }]
      for (const after of positions) {
        for (const filter of filters) {
          for (const order of ['asc', 'desc'] as const) {
            const query = { ...filter, order, after }
            const page = await storage.list({ ...query, limit: 100 })
            assert.deepEqual(page.map(found => found.id), expectedList(orders, query), show(query))
          }
        }
      }
    }
  },
  {
    capability: 'orders',
    name: 'list returns at most limit orders',
    async run (storage) {
      const orders = await seedListOrders(storage)
      for (const limit of [1, 2, 23, 24, 25]) {
        const page = await storage.list({ order: 'asc', limit })
        assert.deepEqual(page.map(order => order.id), expectedList(orders, { order: 'asc' }).slice(0, limit), `limit ${limit}`)
      }
    }
  },
  {
    capability: 'orders',
    name: 'a walk visits each order once while orders are created',
    async run (storage) {
      const orders = await seedListOrders(storage)
      for (const order of ['asc', 'desc'] as const) {
        const seen: string[] = []
        let after: OrderPosition | undefined
        for (let pages = 0; pages <= TIE_IDS.length; pages++) {
          const page = await storage.list({ order, after, limit: 4 })
          seen.push(...page.map(found => found.id))
          if (page.length < 4) break
          after = positionOf(page[page.length - 1]!)
          // Newer than every seeded order, and one tied with the cursor position itself.
          const arrivals = [orderOf({ createdAt: FAR_FUTURE }), orderOf({ createdAt: after.createdAt, customerId: 'cus_new' })]
          orders.push(...arrivals)
          await createAll(storage, arrivals)
        }
        assert.equal(new Set(seen).size, seen.length, `no order is visited twice (${order})`)
        const seeded = TIE_IDS.filter(id => !seen.includes(id))
        assert.deepEqual(seeded, [], `every order stored before the walk is visited (${order})`)
        assert.deepEqual(seen, [...seen].sort((a, b) =>
          (order === 'asc' ? 1 : -1) * comparePositions(orders.find(found => found.id === a)!, orders.find(found => found.id === b)!)),
        `the walk is in ${order} order`)
      }
    }
  },
  {
    capability: 'orders',
    name: 'list reflects status changes made by replace',
    async run (storage) {
      let orders = Array.from({ length: 8 }, (_, i) => orderOf({ customerId: CUSTOMERS[i % 2], createdAt: INSTANTS[i % 3] }))
      await createAll(storage, orders)
      const changes: Array<[number, string]> = [[0, 'paid'], [1, 'paid'], [2, 'cancelled'], [5, 'paid'], [0, 'shipped'], [5, 'refunded']]
      for (const [index, status] of changes) {
        const next = moved(orders[index]!, status)
        assert.equal(await replaceOrder(storage, structuredClone(next), next.version - 1), true)
        orders = orders.map(order => order.id === next.id ? next : order)
        await assertWalks(storage, orders, [
          { statuses: [status] },
          { statuses: ['pending'] },
          { statuses: ['paid', 'shipped'] },
          { customerId: CUSTOMERS[0], statuses: ['paid'] },
          { customerId: CUSTOMERS[1], statuses: ['pending', 'refunded'] },
          { ids: orders.slice(0, 4).map(order => order.id), statuses: [status] }
        ])
      }
      const pages = await storage.list({ statuses: ['shipped'], order: 'asc', limit: 10 })
      assert.deepEqual(pages, [orders[0]], 'list returns the replaced order, not the old one')
    }
  },
  {
    capability: 'orders',
    name: 'custom fields round-trip exactly through create, get, list and replace',
    async run (storage) {
      // Any JSON the host's schemas allow, on the order and on each item (see the customFields option).
      const customFields = {
        address: { name: 'Zoë Ångström 😀 שלום', lines: ['12 rue de la Paix', 'Bâtiment « B »'], city: 'Zürich', country: 'CH' },
        // Floats keep every digit, and integers up to Number.MAX_SAFE_INTEGER stay exact.
        weightKg: 0.1 + 0.2,
        grams: Number.MAX_SAFE_INTEGER,
        tiny: 5e-324,
        huge: 1.7976931348623157e308,
        negative: -1.5e-7,
        insured: false,
        express: true,
        tags: ['fragile', '', 'ünïcødé ✓ "quoted" \\ \'single\''],
        parcels: [{ ref: 'p-1', sizes: [10, 20.5, 0] }, {}],
        nothing: null,
        empty: {},
        // NUL, a lone surrogate and a line break: a json column keeps them, jsonb would refuse the first two.
        note: '\u0000 \ud800 line\nbreak'
      }
      const items = [
        { sku: 'A-1', quantity: 1, unitPrice: 100, customFields: { giftNote: 'Happy birthday 🎂', wrapped: true } },
        { sku: 'B-2', quantity: 2, unitPrice: 0, customFields: {} }
      ]
      const order = { ...orderOf({ items, total: 100 }), customFields }
      assertCreated(await storeOrder(storage, order), order, 'create of an order with custom fields')
      assert.deepEqual(await storage.get(order.id), order, 'get must return custom fields exactly as created')
      assert.deepEqual(await storage.list({ ids: [order.id], order: 'asc', limit: 5 }), [order], 'list must return them exactly too')
      const { nothing, ...kept } = customFields
      const shipped = { ...moved(order, 'shipped'), customFields: { ...kept, trackingNumber: 'TRK-1', insured: true } }
      assert.equal(await replaceOrder(storage, structuredClone(shipped), 1), true)
      assert.deepEqual(await storage.get(order.id), shipped, 'replace stores the new custom fields, keys removed included')
      assert.deepEqual(await storage.list({ statuses: ['shipped'], order: 'desc', limit: 5 }), [shipped])
    }
  }
])
