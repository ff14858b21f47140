// Conformance of changes after placement: replace with a changed event and a change's claim, readChangeClaim, and pages by the balance's sign.
import assert from 'node:assert/strict'
import { changedEvent, type OrderChangeRecord } from '../../feed/events.js'
import type { Order } from '../../http/schemas.js'
import type { CaseStorage, ConformanceCase } from './case.js'
import { DAY, FAR_FUTURE, INSTANTS, LATER, PARALLEL, TIE_IDS, assertWalks, claimOf, createAll, ids, orderOf, readFeed, storeOrder, type ListFilter } from './fixtures.js'

/** An order with the ledger it has with changes on. */
type LedgeredOrder = Order & { paid: number, payments: unknown[], changes: OrderChangeRecord[] }

/** The ledger an order has with changes on, for a total and what was paid. */
function ledgerOf (total: number, paid: number) {
  return { total, paid, balance: total - paid, payments: paid === 0 ? [] : [{ kind: 'payment', amount: paid, reference: `pay_${paid}`, at: DAY }], changes: [] }
}

/** A stored order with its ledger, nothing paid. */
const ledgered = () => orderOf(ledgerOf(2500, 0) as Partial<Order>) as LedgeredOrder

/**
 * The order after one change, as the plugin would replace it: one more version, a payment of `amount`
 * recorded, and the entry of `changes` that says so.
 */
function changed (order: LedgeredOrder, amount: number, at = new Date(Date.parse(order.updatedAt) + 1000).toISOString()): { order: LedgeredOrder, change: OrderChangeRecord } {
  const version = order.version + 1
  const change: OrderChangeRecord = {
    version,
    at,
    actions: [{ type: 'recordPayment', amount, reference: `pay_${version}` }],
    totalBefore: order.total,
    totalAfter: order.total
  }
  const paid = order.paid + amount
  const after = {
    ...order,
    paid,
    balance: order.total - paid,
    payments: [...order.payments, { kind: 'payment', amount, reference: `pay_${version}`, at }],
    changes: [...order.changes, change],
    version,
    updatedAt: at
  }
  return { order: after, change }
}

/** Replaces the stored order by `next`, at `next.version - 1`, with its changed event and an optional claim. */
function replaceChanged (storage: CaseStorage, { order, change }: { order: Order, change: OrderChangeRecord }, claim?: ReturnType<typeof claimOf>): Promise<boolean> {
  return storage.replace(structuredClone(order), order.version - 1, changedEvent(structuredClone(order), structuredClone(change)), claim)
}

/** Orders of every sign of balance, with and without the ledger (an order stored before changes were on owes its total). */
async function seedBalances (storage: CaseStorage): Promise<Order[]> {
  const ledgers = [ledgerOf(2500, 0), ledgerOf(2500, 2500), ledgerOf(2500, 3000), ledgerOf(0, 0), undefined, ledgerOf(1250, 500)]
  const orders = TIE_IDS.map((id, i) => {
    const ledger = ledgers[i % ledgers.length]
    return orderOf({
      id,
      customerId: i % 3 === 0 ? 'cus_a' : 'cus_b',
      status: i % 4 === 0 ? 'shipped' : 'pending',
      createdAt: INSTANTS[(i * 5) % INSTANTS.length],
      ...(ledger === undefined ? { total: i % 4 === 0 ? 2500 : 0, items: [{ sku: 'A-1', quantity: i % 4 === 0 ? 2 : 0, unitPrice: 1250 }] } : ledger)
    } as Partial<Order>)
  })
  await createAll(storage, orders.map((_, i) => orders[(i * 7) % orders.length]!))
  return orders
}

export const changeCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'changes',
    name: 'replace with a changed event stores the order, and the feed lists the event with its change',
    async run (storage) {
      const order = ledgered()
      await createAll(storage, [order])
      const next = changed(order, 1000)
      assert.equal(await replaceChanged(storage, next), true, 'replace at the stored version')
      assert.deepEqual(await storage.get(order.id), next.order, 'get returns the order as the change left it')
      if (typeof storage.listEvents !== 'function') return
      const [created, event] = await readFeed(storage, 2)
      assert.equal(created!.type, 'created')
      assert.equal(event!.type, 'changed', 'the event keeps its type')
      assert.deepEqual(event, { ...changedEvent(next.order, next.change), id: event!.id }, 'the event as given: its order and its change')
      assert.deepEqual((event as { change: OrderChangeRecord }).change, next.change, 'the change is listed as it was stored')
    }
  },
  {
    capability: 'changes',
    name: 'replace with a change claim stores the claim with the order; a second change with the live key stores nothing',
    async run (storage) {
      const order = ledgered()
      await createAll(storage, [order])
      const first = changed(order, 1000)
      assert.equal(await replaceChanged(storage, first, claimOf('change-key-1', 'fingerprint-1')), true, 'the first change with the key')
      assert.deepEqual(await storage.readChangeClaim('change-key-1', DAY), { fingerprint: 'fingerprint-1', order: first.order },
        'readChangeClaim returns the fingerprint and the order as the change left it')
      const second = changed(first.order, 500)
      assert.equal(await replaceChanged(storage, second, claimOf('change-key-1', 'fingerprint-2')), false,
        'a change at the current version with a live claim of its key returns false')
      assert.deepEqual(await storage.get(order.id), first.order, 'and stores nothing: not the order')
      assert.deepEqual(await storage.readChangeClaim('change-key-1', DAY), { fingerprint: 'fingerprint-1', order: first.order }, 'nor its claim')
      if (typeof storage.listEvents === 'function') {
        const events = await readFeed(storage, 2)
        assert.deepEqual(events.map(event => event.type), ['created', 'changed'], 'nor its event')
      }
      assert.equal(await replaceChanged(storage, second), true, 'the same change without a claim applies')
      assert.deepEqual(await storage.readChangeClaim('change-key-1', DAY), { fingerprint: 'fingerprint-1', order: first.order },
        'the claim keeps the order as its change left it, after the order moved on')
      assert.equal(await storage.readChangeClaim('change-key-2', DAY), undefined, 'an unknown key has no claim')
    }
  },
  {
    capability: 'changes',
    name: 'a change claim is stored only with its change: a stale version stores neither',
    async run (storage) {
      const order = ledgered()
      await createAll(storage, [order])
      const stale = changed({ ...order, version: 2 }, 1000)
      assert.equal(await replaceChanged(storage, stale, claimOf('change-stale')), false, 'a version ahead of the stored one')
      assert.equal(await storage.readChangeClaim('change-stale', DAY), undefined, 'no claim is stored')
      assert.deepEqual(await storage.get(order.id), order, 'nor the order')
    }
  },
  {
    capability: 'changes',
    name: 'parallel changes with one key from one version: exactly one stores its order and claim',
    async run (storage) {
      const order = ledgered()
      await createAll(storage, [order])
      const candidates = Array.from({ length: PARALLEL }, (_, i) => changed(order, 100 + i))
      const results = await Promise.all(candidates.map((candidate, i) => replaceChanged(storage, candidate, claimOf('change-parallel', `fingerprint-${i}`))))
      const winners = results.flatMap((replaced, i) => replaced ? [i] : [])
      assert.equal(winners.length, 1, `exactly one of ${PARALLEL} parallel changes must win`)
      const winner = winners[0]!
      assert.deepEqual(await storage.get(order.id), candidates[winner]!.order, 'the stored order is the winner\'s')
      assert.deepEqual(await storage.readChangeClaim('change-parallel', DAY), { fingerprint: `fingerprint-${winner}`, order: candidates[winner]!.order },
        'and so is the claim')
    }
  },
  {
    capability: 'changes',
    name: 'an expired change claim is not returned, frees its key, and is purged with the create claims',
    async run (storage) {
      const order = ledgered()
      const created = orderOf()
      await createAll(storage, [order])
      await storeOrder(storage, created, claimOf('create-expiring', 'fingerprint-c', LATER))
      const first = changed(order, 1000)
      assert.equal(await replaceChanged(storage, first, claimOf('change-expiring', 'fingerprint-1', LATER)), true)
      assert.deepEqual(await storage.readChangeClaim('change-expiring', DAY), { fingerprint: 'fingerprint-1', order: first.order }, 'live before it expires')
      assert.equal(await storage.readChangeClaim('change-expiring', LATER), undefined, 'expiresAt at or before now: expired')
      const second = changed(first.order, 200)
      assert.equal(await replaceChanged(storage, second, claimOf('change-purged', 'fingerprint-2', LATER)), true)
      // A change well after the claim expired takes the key over.
      const third = changed(second.order, 500, INSTANTS[5])
      assert.equal(await replaceChanged(storage, third, claimOf('change-expiring', 'fingerprint-3', FAR_FUTURE)), true, 'an expired claim does not hold its key')
      assert.deepEqual(await storage.readChangeClaim('change-expiring', DAY), { fingerprint: 'fingerprint-3', order: third.order }, 'the key now answers with the new change')
      assert.equal(await storage.purgeIdempotencyKeys(LATER, 10), 2, 'purgeIdempotencyKeys deletes the expired change claim and create claim')
      assert.equal(await storage.readChangeClaim('change-purged', DAY), undefined, 'a purged claim is gone')
      assert.deepEqual(await storage.readChangeClaim('change-expiring', DAY), { fingerprint: 'fingerprint-3', order: third.order }, 'a live one stays')
      assert.deepEqual(await storage.get(order.id), third.order, 'purging keys never touches orders')
    }
  },
  {
    capability: 'changes',
    name: 'list by balance (due, settled, owed), alone and with other filters, walks exactly the matching orders in both orders',
    async run (storage) {
      const orders = await seedBalances(storage)
      const filters: ListFilter[] = []
      for (const balance of ['due', 'settled', 'owed'] as const) {
        filters.push({ balance }, { balance, customerId: 'cus_a' }, { balance, statuses: ['pending'] }, { balance, statuses: ['pending', 'shipped'] },
          { balance, createdFrom: LATER }, { balance, ids: [TIE_IDS[0]!, TIE_IDS[1]!, TIE_IDS[2]!, TIE_IDS[7]!] })
      }
      await assertWalks(storage, orders, filters)
    }
  },
  {
    capability: 'changes',
    name: 'list by balance follows the order\'s changes',
    async run (storage) {
      const order = ledgered()
      await createAll(storage, [order])
      const query = (balance: 'due' | 'settled' | 'owed') => storage.list({ balance, order: 'desc', limit: 10 })
      assert.deepEqual(ids(await query('due')), [order.id], 'due before it is paid')
      const settled = changed(order, 2500)
      assert.equal(await replaceChanged(storage, settled), true)
      assert.deepEqual(ids(await query('due')), [], 'no longer due')
      assert.deepEqual(ids(await query('settled')), [order.id], 'settled once paid in full')
      const owed = changed(settled.order, 100)
      assert.equal(await replaceChanged(storage, owed), true)
      assert.deepEqual(ids(await query('owed')), [order.id], 'owed once paid above its total')
      assert.deepEqual(ids(await query('settled')), [])
    }
  }
])
