// The documented answers of the routes: an order as the request examples would make it, a page, and each error as it is sent.
import { STATUS_CODES } from 'node:http'
import type { CompiledWorkflow } from '../orders/workflow.js'
import { requestExamples } from './schemas.js'

/** One error as the routes send it, keyed by its code: Swagger UI lists each under its status. */
export type ErrorExamples = Record<string, { summary: string, value: { statusCode: number, code: string, error: string, message: string } }>

/** The body of each error, from the error itself, so its status and code are the ones sent. */
export function errorExamples (...errors: Array<Error & { code: string, statusCode?: number }>): ErrorExamples {
  return Object.fromEntries(errors.map(({ code, statusCode, message }) =>
    [code, { summary: code, value: { statusCode: statusCode!, code, error: STATUS_CODES[statusCode!]!, message } }]))
}

/**
 * The order the create example makes, as created and after its move, and a page holding it: the
 * move goes to "paid" when the workflow has that move, else to the first status the initial one leads to.
 * With changes on (`changesOn`), every order has its ledger, and `changed` is the moved order after a
 * payment of its total.
 */
export function orderExamples (workflow: CompiledWorkflow, changesOn = false) {
  const { createOrder, updateOrderStatus } = requestExamples
  const createdAt = '2026-03-02T09:41:07.512Z'
  const total = createOrder.items.reduce((sum, { quantity, unitPrice }) => sum + quantity * unitPrice, 0)
  const ledger = changesOn ? { paid: 0, balance: total, payments: [], changes: [] } : {}
  const created = {
    id: updateOrderStatus.id,
    number: 1042,
    customerId: createOrder.customerId,
    status: workflow.initial,
    currency: createOrder.currency,
    items: createOrder.items,
    total,
    metadata: createOrder.metadata,
    ...ledger,
    version: 1,
    statusHistory: [{ status: workflow.initial, at: createdAt }],
    createdAt,
    updatedAt: createdAt
  }
  const targets = workflow.targetsOf(workflow.initial)
  const to = targets.includes('paid') ? 'paid' : targets[0]
  const movedAt = '2026-03-02T09:43:55.020Z'
  const moved = to === undefined
    ? created
    : { ...created, status: to, version: 2, statusHistory: [...created.statusHistory, { status: to, at: movedAt, reason: updateOrderStatus.reason }], updatedAt: movedAt }
  const paidAt = '2026-03-02T09:47:12.330Z'
  const payment = { type: 'recordPayment', amount: total, reference: 'pi_3Q0' }
  const changed = {
    ...moved,
    paid: total,
    balance: 0,
    version: moved.version + 1,
    payments: [{ kind: 'payment', amount: total, reference: payment.reference, at: paidAt }],
    changes: [{ version: moved.version + 1, at: paidAt, actions: [payment], totalBefore: total, totalAfter: total }],
    updatedAt: paidAt
  }
  return { created, moved, changed, page: { items: [moved], nextCursor: null } }
}
