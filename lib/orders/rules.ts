// The order rules: totals, the workflow, idempotency and scope over the storage. The routes, app.orders and the host's transaction all call them.
import type { CustomFieldValues } from '../custom-fields/types.js'
import type { CustomFieldRules } from '../custom-fields/values.js'
import { encodeCursor } from './cursor.js'
import { codes } from '../errors.js'
import { createdEvent, statusChangedEvent, type OrderEvent } from '../feed/events.js'
import { checkIdempotencyKey, claimOf, fingerprintOf, replayOf } from './idempotency.js'
import { newOrderId } from './ids.js'
import { page } from '../limits.js'
import { readListQuery } from './list-query.js'
import type { CreateOrderInput, ListOrdersQuery, NewOrder, Order, OrderItem, OrderPage, StatusChange, UpdateOrderStatusInput } from '../http/schemas.js'
import type { OrderScope } from './scope.js'
import type { OrdersCapability, StorageListQuery } from '../storage/order-storage.js'
import { runGuard, type TransitionMove } from './guards.js'
import type { CompiledWorkflow } from './workflow.js'

export interface OrderCallOptions {
  /** What the caller may see and touch (with a `customerId` or a `store`, only those orders), and who acts (`actor`). */
  scope?: OrderScope | undefined
  /** createOrder only: makes a retried create safe, as the Idempotency-Key header does. */
  idempotencyKey?: string | undefined
  /** updateStatus only: told of the order once found in scope, so telemetry names only an order that exists. */
  found?: ((order: Order) => void) | undefined
}

/** The three operations, on input that has passed the schemas and a scope that has been checked. */
export interface OrderRules {
  /** The new order, or with a key claimed before the first one (`replayed`). */
  create: (input: CreateOrderInput, options?: OrderCallOptions) => Promise<{ order: Order, replayed: boolean }>
  list: (query: ListOrdersQuery, options?: OrderCallOptions) => Promise<OrderPage>
  /** The order after the move, or as it is when it already has the status. */
  updateStatus: (input: UpdateOrderStatusInput, options?: OrderCallOptions) => Promise<Order>
}

export interface OrderRulesConfig {
  /** Its failures are already ORDER_STORAGE_UNAVAILABLE. */
  storage: Pick<OrdersCapability, 'create' | 'get' | 'list' | 'replace'>
  workflow: CompiledWorkflow
  fields: CustomFieldRules
  /** Freezes an order handed to host code (a guard): a storage may hold the same object. */
  freeze: (order: Order) => Order
  maxPageSize: number
  idempotencyTtl: number
  /**
   * Runs after each stored change, with its event as the feed holds it; what it returns is awaited
   * before the caller gets the order, and it returns nothing when there is nothing to wait for.
   */
  changed: (event: OrderEvent) => Promise<void> | void
}

// The filters a scope fixes.
const SCOPED = ['customerId', 'store'] as const

// A lost compare-and-set means another writer made progress; this bounds retries under a cyclic workflow.
const MAX_UPDATE_ATTEMPTS = 32

function totalOf (items: readonly OrderItem[]): number {
  let total = 0
  for (const { quantity, unitPrice } of items) {
    // Both factors are safe integers, so an unsafe product or sum is exactly an overflow.
    total += quantity * unitPrice
    if (total > Number.MAX_SAFE_INTEGER) throw new codes.ORDER_TOTAL_TOO_LARGE(Number.MAX_SAFE_INTEGER)
  }
  return total
}

/** A history entry: `reason` and `by` (the scope's actor) only when there is one. */
function changeOf (status: string, at: string, reason: string | undefined, scope: OrderScope | undefined): StatusChange {
  const change: StatusChange = { status, at }
  if (reason !== undefined) change.reason = reason
  if (scope?.actor !== undefined) change.by = scope.actor
  return change
}

/** Whether `order` is outside `scope`: another customer's, or another store's (or of no store, under a store). */
function outside (order: Order, scope: OrderScope | undefined): boolean {
  return (scope?.customerId !== undefined && order.customerId !== scope.customerId) ||
    (scope?.store !== undefined && order.store !== scope.store)
}

/** The order after a move to `status`: one more history entry, one more version. */
function movedOrder (current: Order, status: string, reason: string | undefined, scope: OrderScope | undefined, customFields: object | undefined): Order {
  const now = new Date().toISOString()
  // History stays in time order even if this instance's clock lags the last writer's.
  const at = now > current.updatedAt ? now : current.updatedAt
  const next: Order = {
    ...current,
    status,
    version: current.version + 1,
    statusHistory: [...current.statusHistory, changeOf(status, at, reason, scope)],
    updatedAt: at
  }
  if (customFields !== undefined) (next as { customFields?: object }).customFields = customFields
  return next
}

/**
 * The order a create stores, before the storage numbers it, in the scope's store when the body names
 * none; ORDER_FORBIDDEN for another customer or store than the scope's.
 */
function newOrderOf (input: CreateOrderInput, scope: OrderScope | undefined, initial: string, now: Date): NewOrder {
  if (scope?.customerId !== undefined && scope.customerId !== input.customerId) {
    throw new codes.ORDER_FORBIDDEN('create an order for another customer')
  }
  if (scope?.store !== undefined && input.store !== undefined && input.store !== scope.store) {
    throw new codes.ORDER_FORBIDDEN('create an order in another store')
  }
  const total = totalOf(input.items)
  const createdAt = now.toISOString()
  const order: NewOrder = {
    id: newOrderId(now.getTime()),
    customerId: input.customerId,
    status: initial,
    currency: input.currency,
    // The validated input is the order's own: a parsed request body, or app.orders' copy.
    items: input.items,
    total,
    metadata: input.metadata ?? {},
    version: 1,
    statusHistory: [changeOf(initial, createdAt, undefined, scope)],
    createdAt,
    updatedAt: createdAt
  }
  if (input.reference !== undefined) order.reference = input.reference
  const store = input.store ?? scope?.store
  if (store !== undefined) order.store = store
  return order
}

export function orderRules ({ storage, workflow, fields, freeze, maxPageSize, idempotencyTtl, changed }: OrderRulesConfig): OrderRules {
  const defaultLimit = Math.min(page.defaultSize, maxPageSize)

  /** What a guard sees of a move of `order` to `to`: frozen, so it cannot change what is stored next. */
  function moveOf (order: Order, to: string, { reason, customFields }: UpdateOrderStatusInput & { customFields?: CustomFieldValues }, scope: OrderScope | undefined): TransitionMove {
    const move: { -readonly [K in keyof TransitionMove]: TransitionMove[K] } = { order: freeze(order), from: order.status, to }
    if (reason !== undefined) move.reason = reason
    if (customFields !== undefined) {
      fields.freeze({ customFields, items: [] })
      move.customFields = customFields as never
    }
    if (scope !== undefined) move.scope = Object.freeze({ ...scope })
    return Object.freeze(move)
  }

  async function create (input: CreateOrderInput, { scope, idempotencyKey }: OrderCallOptions = {}) {
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey)
    const now = new Date()
    const order = newOrderOf(input, scope, workflow.initial, now)
    fields.fill(order, input)
    const claim = idempotencyKey === undefined
      ? undefined
      : claimOf(idempotencyKey, scope, fingerprintOf(input, fields.fingerprint(input)),
        new Date(now.getTime() + idempotencyTtl).toISOString())
    const event = createdEvent(order)
    const result = await storage.create(order, event, claim)
    if (result.created) {
      const following = changed({ ...event, order: result.order })
      if (following !== undefined) await following
      return { order: result.order, replayed: false }
    }
    // The reference is not in the message: Fastify logs it, and a log line carries no client text.
    if ('referenceTaken' in result) throw new codes.ORDER_REFERENCE_TAKEN()
    return { order: replayOf(result, claim!), replayed: true }
  }

  async function list (query: ListOrdersQuery, { scope }: OrderCallOptions = {}): Promise<OrderPage> {
    const { filter, order, after, limit } = readListQuery(query, defaultLimit)
    // One order more than the page, to know whether another page follows.
    const page: StorageListQuery = Object.assign({ order, after, limit: limit + 1 }, filter)
    // The scope is a filter the caller cannot widen: one naming another customer or store finds nothing.
    for (const key of SCOPED) {
      if (scope?.[key] === undefined) continue
      if (filter[key] !== undefined && filter[key] !== scope[key]) return { items: [], nextCursor: null }
      page[key] = scope[key]
    }
    const items = await storage.list(page)
    if (items.length <= limit) return { items, nextCursor: null }
    items.length = limit
    return { items, nextCursor: encodeCursor(items[limit - 1]!, order, filter) }
  }

  async function updateStatus (input: UpdateOrderStatusInput, { scope, found }: OrderCallOptions = {}): Promise<Order> {
    const { id, status, expectedVersion, reason } = input
    let lostAt = 0
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      const current = await storage.get(id)
      if (current === undefined || outside(current, scope)) throw new codes.ORDER_NOT_FOUND(id)
      found?.(current)
      if (expectedVersion !== undefined && current.version !== expectedVersion) {
        throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      }
      // Custom fields change only with a move: a same-status patch that would change them is refused.
      const customFields = fields.patched(current, input)
      if (current.status === status) {
        if (customFields !== undefined) throw new codes.ORDER_INVALID_TRANSITION(current.status, status, `custom fields change only with a move, and ${workflow.whereFrom(current.status)}`)
        return current
      }
      if (!workflow.allows(current.status, status)) {
        throw new codes.ORDER_INVALID_TRANSITION(current.status, status, workflow.whereFrom(current.status))
      }
      fields.check(customFields)
      // Decided on this version: the compare-and-set below stores the move only if the order is still at it.
      const guard = workflow.guardOf(status)
      if (guard !== undefined) await runGuard(guard, moveOf(current, status, input, scope))
      const next = movedOrder(current, status, reason, scope, customFields)
      const event = statusChangedEvent(next, current.status)
      if (await storage.replace(next, current.version, event)) {
        const following = changed(event)
        if (following !== undefined) await following
        return next
      }
      // Lost a race: re-read, re-check the workflow and run the guard again, unless the caller pinned the version.
      if (expectedVersion !== undefined) throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      lostAt = current.version
    }
    throw new codes.ORDER_VERSION_CONFLICT(id, lostAt)
  }

  return { create, list, updateStatus }
}
