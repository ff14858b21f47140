// Conformance of joinTransaction: a change commits or rolls back with the host's transaction.
import assert from 'node:assert/strict'
import { createdEvent, statusChangedEvent } from '../../feed/events.js'
import type { JoinedStorage } from '../order-storage.js'
import type { CaseStorage, ConformanceCase, ConformanceContext, TransactionRunner } from './case.js'
import { feedBeforeSentinel, ids, moved, orderOf, readFeed } from './fixtures.js'

/** The runner that opens a transaction on the storage's database; the runner of the suite asks for it. */
function runnerOf (context: ConformanceContext): TransactionRunner {
  assert.ok(context.transaction !== undefined, 'the storage implements joinTransaction: give runConformance a transaction option that opens one on its database')
  return context.transaction
}

/** A create and a move of one order through the storage joined to a transaction that ends as `commit` says. */
async function changeInTransaction (storage: CaseStorage, transaction: TransactionRunner, commit: boolean) {
  const { number: _, ...order } = orderOf()
  const created = createdEvent(order)
  let joined: JoinedStorage | undefined
  let paid: ReturnType<typeof statusChangedEvent> | undefined
  await transaction(async client => {
    joined = storage.joinTransaction!(client)
    const result = await joined.create(order, created)
    assert.ok(result.created, 'a create inside the transaction stores the order')
    assert.deepEqual(await joined.get(order.id), result.order, 'and reads it back inside the transaction')
    paid = statusChangedEvent(moved(result.order, 'paid'), 'pending')
    assert.equal(await joined.replace(paid.order, 1, paid), true, 'a replace inside the transaction')
  }, commit)
  const signal = new AbortController().signal
  return { order, created, paid: paid!, settled: await Promise.all([joined!.settled(created.id, signal), joined!.settled(paid!.id, signal)]) }
}

export const transactionCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'transactions',
    name: 'joinTransaction: changes commit with the host\'s transaction, and settled says so',
    async run (storage, context) {
      const { order, created, paid, settled } = await changeInTransaction(storage, runnerOf(context), true)
      assert.deepEqual(settled, [true, true], 'settled: both changes committed')
      assert.deepEqual(await storage.get(order.id), paid.order, 'the order as the transaction left it')
      assert.deepEqual(ids(await readFeed(storage, 2)), [created.id, paid.id], 'both events are listed, in order')
    }
  },
  {
    capability: 'transactions',
    name: 'joinTransaction: changes of a transaction that rolls back leave no order and no event',
    async run (storage, context) {
      const { order, settled } = await changeInTransaction(storage, runnerOf(context), false)
      assert.deepEqual(settled, [false, false], 'settled: neither change committed')
      assert.equal(await storage.get(order.id), undefined, 'no order')
      assert.deepEqual(await feedBeforeSentinel(storage), [], 'no event is ever listed')
    }
  }
])
