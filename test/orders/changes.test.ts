// The change as a pure function: the order as stored and the actions in, the order after out, or the first action refused named.
import t from 'tap'
import { applyChange, totalOf, withLedger, type ChangeRules } from '../../lib/orders/changes.js'
import type { ChangeAction, Order, OrderWithChanges } from '../../lib/index.js'
import { storedOrder } from '../helper.js'

const rules: ChangeRules = { lineEdits: ['pending', 'paid'], returns: ['shipped', 'delivered'], maxItems: 3, maxChanges: 2, maxPayments: 2 }
const at = '2026-01-02T00:00:00.000Z'

/** A placed order of two mugs at 1250 and a plate at 900, with its ledger. */
function placed (overrides: Partial<Order> = {}): OrderWithChanges {
  return withLedger(storedOrder({
    items: [{ sku: 'MUG', quantity: 2, unitPrice: 1250 }, { sku: 'PLATE', quantity: 1, unitPrice: 900 }],
    total: 3400,
    ...overrides
  }))
}

function refusal (order: OrderWithChanges, actions: ChangeAction[], rulesOf: ChangeRules = rules): string {
  try {
    applyChange(order, actions, rulesOf, { at })
  } catch (err) {
    const { code, statusCode, message } = err as { code: string, statusCode: number, message: string }
    return `${statusCode} ${code}: ${message}`
  }
  throw new Error('the change was not refused')
}

t.test('an order stored before changes reads as paid 0, its balance its total, no payments and no changes', async t => {
  const order = storedOrder({ total: 100 })
  t.same(withLedger(order), { ...order, paid: 0, balance: 100, payments: [], changes: [] })
  t.not(withLedger(order), order, 'a copy: the stored order is left as it is')
  const ledgered = placed()
  t.equal(withLedger(ledgered), ledgered, 'an order with its ledger is read as it is')
})

t.test('the total counts what is open on each line: quantity less cancelled and returned', async t => {
  t.equal(totalOf([{ sku: 'A', quantity: 5, unitPrice: 100, cancelled: 1, returned: 2 } as never, { sku: 'B', quantity: 0, unitPrice: 7 }]), 200)
  t.ok(totalOf([{ sku: 'A', quantity: 1_000_000, unitPrice: 1e12 }]) > Number.MAX_SAFE_INTEGER, 'an overflow is a number above the safe range')
})

t.test('a change of lines and money makes one version, one record, and the totals of what is open', async t => {
  const order = placed()
  const actions: ChangeAction[] = [
    { type: 'setQuantity', index: 0, quantity: 3 },
    { type: 'cancelItem', index: 1, quantity: 1 },
    { type: 'addItem', item: { sku: 'BOWL', name: 'Bowl', quantity: 2, unitPrice: 400 } },
    { type: 'setUnitPrice', index: 0, unitPrice: 1000 },
    { type: 'recordPayment', amount: 3000, reference: 'pi_1' },
    { type: 'recordRefund', amount: 200, reference: 're_1' }
  ]
  const { after, applied } = applyChange(order, actions, rules, { at, by: 'staff_7', reason: 'phone call' })
  t.same(applied, actions, 'every action applied')
  t.same(after.items, [
    { sku: 'MUG', quantity: 3, unitPrice: 1000 },
    { sku: 'PLATE', quantity: 1, unitPrice: 900, cancelled: 1 },
    { sku: 'BOWL', name: 'Bowl', quantity: 2, unitPrice: 400 }
  ])
  t.equal(after.total, 3800, '3 × 1000 + 0 × 900 + 2 × 400')
  t.equal(after.paid, 2800)
  t.equal(after.balance, 1000)
  t.same(after.payments, [
    { kind: 'payment', amount: 3000, reference: 'pi_1', at, by: 'staff_7' },
    { kind: 'refund', amount: 200, reference: 're_1', at, by: 'staff_7' }
  ])
  t.same(after.changes, [{ version: 2, at, actions, totalBefore: 3400, totalAfter: 3800, by: 'staff_7', reason: 'phone call' }])
  t.equal(after.version, 2)
  t.equal(after.updatedAt, at)
  t.same(order, placed({ id: order.id, createdAt: order.createdAt }), 'the order given is left as it was')
})

t.test('a return counts on its line and lowers the total; the balance owed back is below 0', async t => {
  const shipped = placed({ status: 'shipped' })
  const { after: paid } = applyChange(shipped, [{ type: 'recordPayment', amount: 3400, reference: 'pi_1' }], rules, { at })
  const { after } = applyChange(paid, [{ type: 'returnItem', index: 0, quantity: 1 }, { type: 'returnItem', index: 0, quantity: 1 }], rules, { at })
  t.same(after.items[0], { sku: 'MUG', quantity: 2, unitPrice: 1250, returned: 2 })
  t.equal(after.total, 900)
  t.equal(after.balance, -2500, 'the shop owes the two mugs back')
  t.equal(after.version, 3)
  t.equal(after.changes.length, 2)
})

t.test('a payment or refund the order has already, same reference, kind and amount, is skipped; a change of only those changes nothing', async t => {
  const { after: paid } = applyChange(placed(), [{ type: 'recordPayment', amount: 1000, reference: 'pi_1' }], rules, { at })
  const retried = applyChange(paid, [{ type: 'recordPayment', amount: 1000, reference: 'pi_1' }], rules, { at })
  t.equal(retried.after, paid, 'the order as it is')
  t.same(retried.applied, [])
  const mixed = applyChange(paid, [{ type: 'recordPayment', amount: 1000, reference: 'pi_1' }, { type: 'recordPayment', amount: 500, reference: 'pi_2' }], rules, { at })
  t.same(mixed.applied, [{ type: 'recordPayment', amount: 500, reference: 'pi_2' }], 'the record keeps the applied ones only')
  t.same(mixed.after.changes.at(-1)!.actions, mixed.applied)
  t.equal(mixed.after.paid, 1500)
})

t.test('the first action the order does not allow is refused with 409 ORDER_CHANGE_REFUSED naming its position and the limit', async t => {
  const order = placed()
  const cases: Array<[ChangeAction[], string, OrderWithChanges?, ChangeRules?]> = [
    [[{ type: 'recordPayment', amount: 1, reference: 'p' }, { type: 'cancelItem', index: 0, quantity: 3 }], 'actions[1]: items[0] has 2 open, not 3'],
    [[{ type: 'returnItem', index: 0, quantity: 1 }], 'actions[0]: returnItem is allowed in shipped or delivered, and the order is pending'],
    [[{ type: 'returnItem', index: 0, quantity: 1 }], 'actions[0]: returnItem is allowed in no status, and the order is pending', undefined, { ...rules, returns: [] }],
    [[{ type: 'setUnitPrice', index: 0, unitPrice: 1 }], 'actions[0]: setUnitPrice is allowed in pending or paid, and the order is shipped', placed({ status: 'shipped' })],
    [[{ type: 'setQuantity', index: 2, quantity: 1 }], 'actions[0]: items[2] does not exist: the order has 2 lines'],
    [[{ type: 'cancelItem', index: 0, quantity: 1 }, { type: 'setQuantity', index: 0, quantity: 0 }], 'actions[1]: items[0] has 1 cancelled or returned, more than a quantity of 0'],
    [[{ type: 'recordRefund', amount: 1, reference: 're_1' }], 'actions[0]: a refund of 1 is above the 0 paid'],
    [[{ type: 'recordPayment', amount: 10, reference: 'p' }, { type: 'recordRefund', amount: 10, reference: 'p' }], 'actions[1]: reference "p" is recorded already, as a payment of 10'],
    [[{ type: 'recordPayment', amount: 10, reference: 'p' }, { type: 'recordPayment', amount: 11, reference: 'p' }], 'actions[1]: reference "p" is recorded already, as a payment of 10'],
    [[{ type: 'addItem', item: { sku: 'X', quantity: 1, unitPrice: 1 } }, { type: 'addItem', item: { sku: 'Y', quantity: 1, unitPrice: 1 } }], 'actions[1]: the order has 3 lines, and maxItems is 3'],
    [[{ type: 'setQuantity', index: 0, quantity: 1_000_000 }, { type: 'setUnitPrice', index: 0, unitPrice: 1e12 }], `actions[1]: the total would exceed ${Number.MAX_SAFE_INTEGER} minor units`],
    [[{ type: 'recordPayment', amount: Number.MAX_SAFE_INTEGER, reference: 'a' }, { type: 'recordPayment', amount: 1, reference: 'b' }], `actions[1]: the payments would exceed ${Number.MAX_SAFE_INTEGER} minor units`]
  ]
  for (const [actions, message, on = order, rulesOf = rules] of cases) {
    t.equal(refusal(on, actions, rulesOf), `409 ORDER_CHANGE_REFUSED: ${message}`, message)
  }
})

t.test('payments and refunds are allowed in every status, line actions only in their statuses', async t => {
  const cancelled = placed({ status: 'cancelled' })
  const { after } = applyChange(cancelled, [{ type: 'recordPayment', amount: 100, reference: 'late' }, { type: 'recordRefund', amount: 100, reference: 'back' }], rules, { at })
  t.equal(after.paid, 0)
  t.equal(after.payments.length, 2)
  t.match(refusal(cancelled, [{ type: 'cancelItem', index: 0, quantity: 1 }]), /cancelItem is allowed in pending or paid, and the order is cancelled/)
})
