// A change after placement as one pure function: from the order as stored and the actions to the order after, for the real call and the preview alike.
import { codes } from '../errors.js'
import type { ChangeAction, Order, OrderChange, OrderItem, OrderPayment, OrderWithChanges } from '../http/schemas.js'
import { listed } from './workflow.js'

/** Where changes may act: the statuses of the `changes` option and the limit on lines. */
export interface ChangeRules {
  /** Statuses in which lines may be added, requantified, repriced or cancelled. */
  lineEdits: readonly string[]
  /** Statuses in which quantities may be returned. */
  returns: readonly string[]
  maxItems: number
  /** Entries an order's `changes` may hold (`changes.maxChanges`). */
  maxChanges: number
  /** Entries an order's `payments` may hold (`changes.maxPayments`). */
  maxPayments: number
}

/** Who changes the order, when and why: written in the change's record and its payments. */
export interface ChangeContext {
  at: string
  by?: string | undefined
  reason?: string | undefined
}

/** What a change does: the order after it, and the actions it applied (none when every one was skipped). */
export interface ChangeOutcome {
  /** The order after the change; the order given, unchanged, when no action applied. */
  after: OrderWithChanges
  applied: ChangeAction[]
}

type Line = OrderItem & { cancelled?: number, returned?: number }
type LineAction = Extract<ChangeAction, { index: number }>

/** What is still open on a line: neither cancelled nor returned. */
function openOf ({ quantity, cancelled = 0, returned = 0 }: Line): number {
  return quantity - cancelled - returned
}

/**
 * Σ open × unitPrice of `items`; as soon as it passes Number.MAX_SAFE_INTEGER, a number above it
 * (both factors are safe integers, so an unsafe product or sum is exactly an overflow).
 */
export function totalOf (items: readonly Line[]): number {
  let total = 0
  for (const item of items) {
    total += openOf(item) * item.unitPrice
    if (total > Number.MAX_SAFE_INTEGER) return total
  }
  return total
}

/**
 * The payments and changes of an order that has none. One frozen array serves every such order: a
 * change makes new arrays, never writes into an order's, so none of it is stored once per order.
 */
export const NONE = Object.freeze([]) as unknown as never[]

/**
 * The order with the ledger every order has once changes are on: an order stored before they were
 * (or created with them off) reads as paid 0, its balance its total, no payments and no changes.
 */
export function withLedger (order: Order): OrderWithChanges {
  if ((order as Partial<OrderWithChanges>).payments !== undefined) return order as OrderWithChanges
  return { ...order, paid: 0, balance: order.total, payments: NONE, changes: NONE }
}

/**
 * The order as shown with changes off: as stored, so that one changed or paid while they were on keeps
 * its ledger and its lines their counters, and its total agrees with them; an order with an empty
 * ledger (no change, no payment) shows as any order does with changes off.
 */
export function withoutEmptyLedger (order: Order): Order {
  const { payments, changes } = order as Partial<OrderWithChanges>
  if (payments === undefined || payments.length > 0 || changes!.length > 0) return order
  const { paid, balance, payments: none, changes: nothing, ...shown } = order as OrderWithChanges
  return shown
}

const refused = (position: number, why: string) => new codes.ORDER_CHANGE_REFUSED(`actions[${position}]: ${why}`)

/** The statuses an action is allowed in, in words. */
function allowedIn (type: string, statuses: readonly string[], status: string): string {
  return statuses.length === 0
    ? `${type} is allowed in no status, and the order is ${status}`
    : `${type} is allowed in ${listed(statuses)}, and the order is ${status}`
}

/**
 * Applies `actions` to `order` (as stored) in order, all or none: the order after, with one more
 * version and an entry in `changes` for the actions applied, or the order as it is when every action
 * was skipped (a payment or refund the order has already). ORDER_CHANGE_REFUSED for the first action
 * the order does not allow, naming its position and the limit.
 */
export function applyChange (order: OrderWithChanges, actions: readonly ChangeAction[], rules: ChangeRules, context: ChangeContext): ChangeOutcome {
  const items: Line[] = [...order.items]
  let payments: OrderPayment[] = order.payments
  let paid = order.paid
  let total = order.total
  const applied: ChangeAction[] = []
  actions.forEach((action, position) => {
    if (action.type === 'recordPayment' || action.type === 'recordRefund') {
      const kind = action.type === 'recordPayment' ? 'payment' : 'refund'
      const recorded = payments.find(({ reference }) => reference === action.reference)
      if (recorded !== undefined) {
        // A provider's retried notice: the same payment once more, skipped; anything else under its reference is a mistake.
        if (recorded.kind === kind && recorded.amount === action.amount) return
        throw refused(position, `reference ${JSON.stringify(action.reference)} is recorded already, as a ${recorded.kind} of ${recorded.amount}`)
      }
      if (payments.length >= rules.maxPayments) throw refused(position, `an order holds at most ${rules.maxPayments} payments and refunds (changes.maxPayments)`)
      if (kind === 'refund' && action.amount > paid) throw refused(position, `a refund of ${action.amount} is above the ${paid} paid`)
      paid += kind === 'payment' ? action.amount : -action.amount
      if (paid > Number.MAX_SAFE_INTEGER) throw refused(position, `the payments would exceed ${Number.MAX_SAFE_INTEGER} minor units`)
      const payment: OrderPayment = { kind, amount: action.amount, reference: action.reference, at: context.at }
      if (context.by !== undefined) payment.by = context.by
      payments = [...payments, payment]
    } else {
      if (action.type === 'returnItem') {
        if (!rules.returns.includes(order.status)) throw refused(position, allowedIn(action.type, rules.returns, order.status))
      } else if (!rules.lineEdits.includes(order.status)) throw refused(position, allowedIn(action.type, rules.lineEdits, order.status))
      if (action.type === 'addItem') {
        if (items.length >= rules.maxItems) throw refused(position, `the order has ${items.length} lines, and maxItems is ${rules.maxItems}`)
        items.push({ ...action.item })
      } else {
        const { index } = action
        const line = items[index]
        if (line === undefined) throw refused(position, `items[${index}] does not exist: the order has ${items.length} line${items.length === 1 ? '' : 's'}`)
        items[index] = changedLine(line, action, position)
      }
      total = totalOf(items)
      if (total > Number.MAX_SAFE_INTEGER) throw refused(position, `the total would exceed ${Number.MAX_SAFE_INTEGER} minor units`)
    }
    applied.push(action)
  })
  if (applied.length === 0) return { after: order, applied }
  if (order.changes.length >= rules.maxChanges) throw new codes.ORDER_CHANGE_REFUSED(`an order holds at most ${rules.maxChanges} changes (changes.maxChanges)`)
  const version = order.version + 1
  const change: OrderChange = { version, at: context.at, actions: applied, totalBefore: order.total, totalAfter: total }
  if (context.by !== undefined) change.by = context.by
  if (context.reason !== undefined) change.reason = context.reason
  const after: OrderWithChanges = {
    ...order,
    items,
    total,
    paid,
    balance: total - paid,
    payments,
    changes: [...order.changes, change],
    version,
    updatedAt: context.at
  }
  return { after, applied }
}

/** Whatever the status, the rules of a cancel of the whole order: every open quantity, recorded however full the order's ledger. */
const CANCEL_ALL: Omit<ChangeRules, 'lineEdits'> = { returns: [], maxItems: Infinity, maxChanges: Infinity, maxPayments: Infinity }

/**
 * The order with every open quantity cancelled, recorded as one change of cancelItem actions (a move
 * into a status of `changes.cancelling` makes it), or the order as it is when nothing is open. It
 * passes `maxChanges`: it follows a move, so an order takes at most one more than the changes that
 * reopened its lines.
 */
export function cancelledAll (order: OrderWithChanges, context: ChangeContext): OrderWithChanges {
  const actions: ChangeAction[] = []
  order.items.forEach((line, index) => {
    const open = openOf(line)
    if (open > 0) actions.push({ type: 'cancelItem', index, quantity: open })
  })
  return actions.length === 0 ? order : applyChange(order, actions, { ...CANCEL_ALL, lineEdits: [order.status] }, context).after
}

/** A line after one of the actions that address it, or ORDER_CHANGE_REFUSED naming the limit it breaks. */
function changedLine (line: Line, action: LineAction, position: number): Line {
  const { index } = action
  const open = openOf(line)
  switch (action.type) {
    case 'setQuantity': {
      const closed = line.quantity - open
      if (action.quantity < closed) throw refused(position, `items[${index}] has ${closed} cancelled or returned, more than a quantity of ${action.quantity}`)
      return { ...line, quantity: action.quantity }
    }
    case 'setUnitPrice':
      return { ...line, unitPrice: action.unitPrice }
    default: {
      if (action.quantity > open) throw refused(position, `items[${index}] has ${open} open, not ${action.quantity}`)
      const counter = action.type === 'cancelItem' ? 'cancelled' : 'returned'
      return { ...line, [counter]: (line[counter] ?? 0) + action.quantity }
    }
  }
}
