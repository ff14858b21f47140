// What a SQL storage keeps for changes after placement, run by each SQL adapter's test file on its own storage:
// replace with a changed event and a change's claim, readChangeClaim, the purge of claims, balance pages.
import type { Test } from 'tap'
import type { OrderChangedEvent } from '../../lib/feed/events.js'
import type { Order } from '../../lib/http/schemas.js'
import { newEventId } from '../../lib/orders/ids.js'
import { claimOf, DAY, FAR_FUTURE, orderOf, readFeed, storeOrder } from '../../lib/storage/conformance/fixtures.js'
import type { CaseStorage } from '../../lib/storage/conformance/case.js'
import type { JoinedStorage, OrderStorage, StorageListQuery } from '../../lib/storage/order-storage.js'

type ChangeStorage = CaseStorage & Required<Pick<OrderStorage, 'joinTransaction' | 'readChangeClaim'>>

export interface ChangeStorageOptions {
  /** A fresh, initialised, empty storage. */
  storage: () => Promise<ChangeStorage>
  /** Runs work on a client in a transaction the host opened, committed or rolled back. */
  transaction: (work: (client: unknown) => Promise<void>, commit: boolean) => Promise<void>
}

/**
 * The order after a change that records a payment of `paid` and leaves `balance`, with its changed event:
 * `version` one up, `changes` one entry longer, as the plugin would replace it.
 */
export function changed (order: Order, { paid, balance }: { paid: number, balance: number }): { after: Order, event: OrderChangedEvent } {
  const at = new Date(Date.parse(order.updatedAt) + 1000).toISOString()
  const before = order as Order & { changes?: unknown[] }
  const change = { version: order.version + 1, at, actions: [{ type: 'recordPayment', amount: paid, reference: `pay_${order.version}` }], totalBefore: order.total, totalAfter: order.total }
  const after = { ...order, paid, balance, version: order.version + 1, updatedAt: at, changes: [...before.changes ?? [], change] } as Order
  return { after, event: { id: newEventId(), type: 'changed', at, order: after, change } }
}

/** What a page with `balance` must hold: the orders of that sign of their balance (or total), in page order. */
function expectedBalancePage (orders: Order[], query: Omit<StorageListQuery, 'limit'>): string[] {
  const signOf = (order: Order) => Math.sign((order as Order & { balance?: number }).balance ?? order.total)
  const sign = { due: 1, settled: 0, owed: -1 }[query.balance!]
  return orders
    .filter(order => signOf(order) === sign && (query.customerId === undefined || order.customerId === query.customerId) &&
      (query.store === undefined || order.store === query.store) && (query.statuses === undefined || query.statuses.includes(order.status)) &&
      (query.reference === undefined || order.reference === query.reference))
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * (query.order === 'asc' ? 1 : -1))
    .map(order => order.id)
}

export function changeStorageTests (t: Test, { storage: storageOf, transaction }: ChangeStorageOptions): void {
  t.test('a replace with a changed event stores the order, and the feed lists the event with its type and change', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const { after, event } = changed(order, { paid: 1000, balance: 1500 })
    t.equal(await storage.replace(after, 1, event), true)
    t.same(await storage.get(order.id), after)
    const [, listed] = await readFeed(storage, 2)
    t.same(listed, event, 'a changed event, with its order and change')
  })

  t.test('a change with a claim stores it with the order as the change left it, readable while live', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const { after, event } = changed(order, { paid: 2500, balance: 0 })
    const claim = claimOf('change:key-1', 'fingerprint-1', '2026-01-02T10:00:00.000Z')
    t.equal(await storage.replace(after, 1, event, claim), true)
    t.same(await storage.readChangeClaim('change:key-1', DAY), { fingerprint: 'fingerprint-1', order: after })
    t.equal(await storage.readChangeClaim('change:key-1', claim.expiresAt), undefined, 'not once it has expired')
    t.equal(await storage.readChangeClaim('change:key-2', DAY), undefined, 'nor for a key never claimed')
    // A create's key is never a change's claim.
    await storeOrder(storage, orderOf(), claimOf('create:key-1'))
    t.equal(await storage.readChangeClaim('create:key-1', DAY), undefined, 'nor for a create\'s key')
  })

  t.test('a change whose key has a live claim stores nothing: neither order, event nor claim', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const first = changed(order, { paid: 1000, balance: 1500 })
    t.equal(await storage.replace(first.after, 1, first.event, claimOf('change:key-1', 'fingerprint-1')), true)
    // Another order, or the same one at its new version: the key is taken either way.
    const other = orderOf()
    await storeOrder(storage, other)
    const second = changed(first.after, { paid: 2500, balance: 0 })
    const third = changed(other, { paid: 100, balance: 2400 })
    t.equal(await storage.replace(second.after, 2, second.event, claimOf('change:key-1', 'fingerprint-2')), false)
    t.equal(await storage.replace(third.after, 1, third.event, claimOf('change:key-1', 'fingerprint-3')), false)
    t.same(await storage.get(order.id), first.after, 'the order as the first change left it')
    t.same(await storage.get(other.id), other, 'the other order unchanged')
    t.same(await storage.readChangeClaim('change:key-1', DAY), { fingerprint: 'fingerprint-1', order: first.after }, 'the first claim kept')
    const events = await readFeed(storage, 3)
    t.same(events.map(event => event.type), ['created', 'changed', 'created'], 'no event of the changes refused')
    t.equal(await storage.replace(second.after, 2, second.event, claimOf('change:key-2')), true, 'with another key it is stored')
  })

  t.test('a change whose claim of its key expired before it takes the key over', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const first = changed(order, { paid: 1000, balance: 1500 })
    // Expires at the second change's updatedAt: expired for it.
    const second = changed(first.after, { paid: 2500, balance: 0 })
    t.equal(await storage.replace(first.after, 1, first.event, claimOf('change:key-1', 'fingerprint-1', second.after.updatedAt)), true)
    t.equal(await storage.replace(second.after, 2, second.event, claimOf('change:key-1', 'fingerprint-2')), true)
    t.same(await storage.readChangeClaim('change:key-1', second.after.updatedAt), { fingerprint: 'fingerprint-2', order: second.after })
  })

  t.test('a change with a claim at a stale version stores nothing, not even the claim', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const { after, event } = changed(order, { paid: 1000, balance: 1500 })
    t.equal(await storage.replace({ ...after, version: 3 }, 2, event, claimOf('change:key-1')), false)
    t.same(await storage.get(order.id), order)
    t.equal(await storage.readChangeClaim('change:key-1', DAY), undefined)
    t.same((await readFeed(storage, 1)).map(event => event.type), ['created'])
  })

  t.test('expired change claims are purged with create claims, live ones stay', async t => {
    const storage = await storageOf()
    const orders = [orderOf(), orderOf(), orderOf()]
    for (const order of orders) await storeOrder(storage, order)
    await storeOrder(storage, orderOf(), claimOf('create:old', 'f', '2026-01-01T11:00:00.000Z'))
    const [old, live] = [changed(orders[0]!, { paid: 1, balance: 2499 }), changed(orders[1]!, { paid: 2, balance: 2498 })]
    t.equal(await storage.replace(old.after, 1, old.event, claimOf('change:old', 'f', '2026-01-01T11:00:00.000Z')), true)
    t.equal(await storage.replace(live.after, 1, live.event, claimOf('change:live', 'f', FAR_FUTURE)), true)
    t.equal(await storage.purgeIdempotencyKeys('2026-01-01T12:00:00.000Z', 100), 2, 'the expired create and change claims')
    t.equal(await storage.readChangeClaim('change:old', DAY), undefined)
    t.same(await storage.readChangeClaim('change:live', DAY), { fingerprint: 'f', order: live.after })
  })

  t.test('balance pages hold the orders of that sign of their balance, or of their total without one, with every other filter', async t => {
    const storage = await storageOf()
    const orders: Order[] = []
    const balances = [undefined, 0, 500, -300, undefined]
    // References repeat every 5 orders, customers every 3, stores every 2: each is its customer's only one in its store.
    for (let i = 0; i < 30; i++) {
      const createdAt = new Date(Date.parse(DAY) + Math.floor(i / 2) * 1000).toISOString()
      const balance = balances[i % 5]
      const total = i % 7 === 0 ? 0 : 2500
      const fields = { customerId: `cus_${i % 3}`, status: ['pending', 'paid', 'shipped'][Math.floor(i / 2) % 3]!, total, createdAt, updatedAt: createdAt, reference: `ref_${i % 5}` }
      const order = orderOf({ ...fields, ...(i % 4 === 0 ? {} : { store: `store_${i % 2}` }), ...(balance === undefined ? {} : { balance } as object) })
      await storeOrder(storage, order)
      orders.push(order)
    }
    // A change moves an order from one sign to another.
    for (const [index, balance] of [[1, -200], [2, 0], [3, 700]] as const) {
      const { after, event } = changed(orders[index]!, { paid: 2500 - balance, balance })
      t.equal(await storage.replace(after, 1, event), true)
      orders[index] = after
    }
    const filters: Array<Partial<StorageListQuery>> = [
      {}, { statuses: ['paid'] }, { statuses: ['paid', 'pending'] }, { customerId: 'cus_1' }, { customerId: 'cus_1', statuses: ['pending', 'shipped'] },
      { store: 'store_0' }, { store: 'store_1', statuses: ['paid'] }, { store: 'store_0', customerId: 'cus_2' }, { store: 'store_1', customerId: 'cus_0', statuses: ['paid', 'pending'] },
      { reference: 'ref_1' }, { reference: 'ref_2', customerId: 'cus_2' }, { reference: 'ref_3', store: 'store_1' }
    ]
    for (const balance of ['due', 'settled', 'owed'] as const) {
      for (const filter of filters) {
        for (const order of ['asc', 'desc'] as const) {
          const query = { ...filter, balance, order }
          const expected = expectedBalancePage(orders, query)
          // In pages of 2, each after the last order of the one before.
          const got: string[] = []
          for (;;) {
            const last = got.length === 0 ? undefined : orders.find(stored => stored.id === got.at(-1))!
            const page = await storage.list({ ...query, limit: 2, after: last === undefined ? undefined : { createdAt: last.createdAt, id: last.id } })
            got.push(...page.map(stored => stored.id))
            if (page.length < 2) break
          }
          t.same(got, expected, `${JSON.stringify(query)}: ${expected.length} orders`)
        }
      }
    }
    t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 10, number: orders[1]!.number })).map(order => order.id), [orders[1]!.id], 'a number of that sign')
    t.same(await storage.list({ balance: 'due', order: 'asc', limit: 10, number: orders[1]!.number }), [], 'a number of another sign')
    t.same((await storage.list({ balance: 'settled', order: 'asc', limit: 10, ids: orders.map(order => order.id) })).length, expectedBalancePage(orders, { balance: 'settled', order: 'asc' }).length, 'ids of that sign')
  })

  t.test('in the host\'s transaction, a change and its claim commit or roll back with it, and a live claim is no conflict', async t => {
    const storage = await storageOf()
    const order = orderOf()
    await storeOrder(storage, order)
    const first = changed(order, { paid: 1000, balance: 1500 })
    await transaction(async client => {
      const joined: JoinedStorage = storage.joinTransaction(client)
      t.equal(await joined.replace(first.after, 1, first.event, claimOf('change:rolled-back')), true)
      t.same(await joined.readChangeClaim!('change:rolled-back', DAY), { fingerprint: 'fingerprint-1', order: first.after }, 'read in the transaction')
    }, false)
    t.same(await storage.get(order.id), order, 'rolled back: the order as it was')
    t.equal(await storage.readChangeClaim('change:rolled-back', DAY), undefined, 'and no claim')
    await transaction(async client => {
      const joined = storage.joinTransaction(client)
      t.equal(await joined.replace(first.after, 1, first.event, claimOf('change:committed')), true)
    }, true)
    t.same(await storage.get(order.id), first.after, 'committed: the change')
    t.same(await storage.readChangeClaim('change:committed', DAY), { fingerprint: 'fingerprint-1', order: first.after }, 'and its claim')
    const second = changed(first.after, { paid: 2500, balance: 0 })
    await transaction(async client => {
      const joined = storage.joinTransaction(client)
      t.equal(await joined.replace(second.after, 2, second.event, claimOf('change:committed', 'fingerprint-2')), false, 'a live claim: false, no error')
      t.same(await joined.readChangeClaim!('change:committed', DAY), { fingerprint: 'fingerprint-1', order: first.after })
    }, true)
    t.same(await storage.get(order.id), first.after, 'nothing of the refused change')
    const events = await readFeed(storage, 2)
    t.same(events.map(event => event.type), ['created', 'changed'])
  })
}
