// Properties of the change function: whatever actions come, applied or refused, the order's money and versions add up.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import { applyChange, withLedger, type ChangeRules } from '../../lib/orders/changes.js'
import type { ChangeAction, OrderWithChanges } from '../../lib/index.js'
import { storedOrder } from '../helper.js'

const rules: ChangeRules = { lineEdits: ['pending', 'paid'], returns: ['shipped', 'delivered'], maxItems: 6, maxChanges: 100, maxPayments: 100 }
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled']

const index = fc.integer({ min: 0, max: 6 })
const quantity = fc.integer({ min: 1, max: 5 })
// Few references, so payments are retried and refused under another kind or amount.
const reference = fc.constantFrom('pi_1', 'pi_2', 'pi_3', 're_1', 're_2')
const amount = fc.constantFrom(100, 250, 1000, 5000)

const actionArb: fc.Arbitrary<ChangeAction> = fc.oneof(
  fc.record({ type: fc.constant('addItem' as const), item: fc.record({ sku: fc.constantFrom('A', 'B'), quantity, unitPrice: fc.integer({ min: 0, max: 2000 }) }) }),
  fc.record({ type: fc.constant('setQuantity' as const), index, quantity: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ type: fc.constant('setUnitPrice' as const), index, unitPrice: fc.integer({ min: 0, max: 2000 }) }),
  fc.record({ type: fc.constant('cancelItem' as const), index, quantity }),
  fc.record({ type: fc.constant('returnItem' as const), index, quantity }),
  fc.record({ type: fc.constant('recordPayment' as const), amount, reference }),
  fc.record({ type: fc.constant('recordRefund' as const), amount, reference })
)

/** A step: a change of 1 to 4 actions, or a move to another status (counted in the history, as the rules do). */
const stepArb = fc.oneof(
  { weight: 4, arbitrary: fc.array(actionArb, { minLength: 1, maxLength: 4 }).map(actions => ({ actions })) },
  { weight: 1, arbitrary: fc.constantFrom(...STATUSES).map(status => ({ status })) }
)

function assertLedger (order: OrderWithChanges): void {
  let total = 0
  for (const { quantity, unitPrice, cancelled = 0, returned = 0 } of order.items as Array<{ quantity: number, unitPrice: number, cancelled?: number, returned?: number }>) {
    const open = quantity - cancelled - returned
    assert.ok(open >= 0, 'no line has less than nothing open')
    total += open * unitPrice
  }
  assert.equal(order.total, total, 'total = Σ open × unitPrice')
  const paid = order.payments.reduce((sum, { kind, amount }) => sum + (kind === 'payment' ? amount : -amount), 0)
  assert.equal(order.paid, paid, 'paid = Σ payments − Σ refunds')
  assert.ok(order.paid >= 0, 'refunds never exceed payments')
  assert.equal(order.balance, order.total - order.paid, 'balance = total − paid')
  assert.equal(order.version, order.statusHistory.length + order.changes.length, 'version = history + changes')
  assert.equal(new Set(order.payments.map(({ reference }) => reference)).size, order.payments.length, 'a reference is recorded once')
  order.changes.forEach((change, i) => {
    assert.equal(change.totalAfter, i + 1 < order.changes.length ? order.changes[i + 1]!.totalBefore : order.total, 'each change starts from the total the one before left')
  })
}

t.test('random changes and moves, applied or refused, keep total, paid, balance and version consistent', async t => {
  fc.assert(fc.property(fc.array(stepArb, { maxLength: 25 }), steps => {
    let order = withLedger(storedOrder({ items: [{ sku: 'A', quantity: 2, unitPrice: 1250 }], total: 2500 }))
    for (const step of steps) {
      if ('status' in step) {
        const at = order.updatedAt
        order = { ...order, status: step.status, version: order.version + 1, statusHistory: [...order.statusHistory, { status: step.status, at }] }
        continue
      }
      const given = order
      const before = JSON.stringify(order)
      try {
        const { after, applied } = applyChange(order, step.actions, rules, { at: order.updatedAt })
        assert.equal(after.version, order.version + (applied.length === 0 ? 0 : 1), 'one version per applied change, none when every action was skipped')
        order = after
      } catch (err) {
        assert.equal((err as { code: string }).code, 'ORDER_CHANGE_REFUSED', String(err))
      }
      assert.equal(JSON.stringify(given), before, 'the order given is never changed')
      assertLedger(order)
    }
  }), { seed: 20261127, numRuns: 300 })
  t.pass('every run kept the ledger')
})
