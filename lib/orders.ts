// The order rules: totals, the workflow, idempotency and scope, over the storage; the routes and app.orders share them.
import type { CustomFieldRules } from './custom-fields/rules.js'
import { encodeCursor } from './cursor.js'
import { codes } from './errors.js'
import { createdEvent, statusChangedEvent } from './events.js'
import { checkIdempotencyKey, claimOf, fingerprintOf, replayOf } from './idempotency.js'
import { newOrderId } from './ids.js'
import { readListQuery } from './list-query.js'
import type { CreateOrderInput, ListOrdersQuery, NewOrder, Order, OrderItem, OrderPage, UpdateOrderStatusInput } from './schemas.js'
import type { OrderScope } from './scope.js'
import type { OrderStore } from './storage/types.js'
import type { CompiledWorkflow } from './workflow.js'

export interface OrderRulesConfig {
  /** Its failures are already ORDER_STORAGE_UNAVAILABLE. */
  storage: Pick<OrderStore, 'create' | 'get' | 'list' | 'replace'>
  workflow: CompiledWorkflow
  fields: CustomFieldRules
  maxPageSize: number
  idempotencyTtl: number
}

/** The rules on input that has passed the schemas. */
export interface OrderRules {
  /** A new order and the id of its event, or with a claimed key the first one (`replayed`, no event). */
  create: (input: CreateOrderInput, scope?: OrderScope, idempotencyKey?: string) => Promise<{ order: Order, replayed: boolean, eventId?: string }>
  list: (query: ListOrdersQuery, scope?: OrderScope) => Promise<OrderPage>
  /** The order after the move, the status it left and the move's event; `from` is undefined for a same-status no-op. */
  move: (input: UpdateOrderStatusInput, scope?: OrderScope) => Promise<{ order: Order, from?: string, eventId?: string }>
}

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

export function orderRules ({ storage, workflow, fields, maxPageSize, idempotencyTtl }: OrderRulesConfig): OrderRules {
  const defaultLimit = Math.min(20, maxPageSize)

  async function create (input: CreateOrderInput, scope?: OrderScope, idempotencyKey?: string) {
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey)
    if (scope?.customerId !== undefined && scope.customerId !== input.customerId) {
      throw new codes.ORDER_FORBIDDEN('create an order for another customer')
    }
    const total = totalOf(input.items)
    const now = new Date()
    const createdAt = now.toISOString()
    const order: NewOrder = {
      id: newOrderId(now.getTime()),
      customerId: input.customerId,
      status: workflow.initial,
      currency: input.currency,
      // The validated input is the order's own: a parsed request body, or app.orders' copy.
      items: input.items,
      total,
      metadata: input.metadata ?? {},
      version: 1,
      statusHistory: [{ status: workflow.initial, at: createdAt }],
      createdAt,
      updatedAt: createdAt
    }
    if (input.reference !== undefined) order.reference = input.reference
    fields.fill(order, input)
    const claim = idempotencyKey === undefined
      ? undefined
      : claimOf(idempotencyKey, scope?.customerId, fingerprintOf(input, fields.fingerprint(input)),
        new Date(now.getTime() + idempotencyTtl).toISOString())
    const event = createdEvent(order)
    const result = await storage.create(order, event, claim)
    if (result.created) return { order: result.order, replayed: false, eventId: event.id }
    if ('referenceTaken' in result) throw new codes.ORDER_REFERENCE_TAKEN(input.reference)
    return { order: replayOf(result, claim!), replayed: true }
  }

  async function list (query: ListOrdersQuery, scope?: OrderScope): Promise<OrderPage> {
    const { normalized, storageQuery, limit } = readListQuery(query, defaultLimit)
    const scopedCustomer = scope?.customerId
    if (scopedCustomer !== undefined) {
      if (storageQuery.customerId !== undefined && storageQuery.customerId !== scopedCustomer) return { items: [], nextCursor: null }
      storageQuery.customerId = scopedCustomer
    }
    let items = await storage.list(storageQuery)
    if (items.length <= limit) return { items, nextCursor: null }
    items = items.slice(0, limit)
    return { items, nextCursor: encodeCursor(items[limit - 1]!, normalized) }
  }

  async function move (input: UpdateOrderStatusInput, scope?: OrderScope) {
    const { id, status, expectedVersion, reason } = input
    let lostAt = 0
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      const current = await storage.get(id)
      if (current === undefined || (scope?.customerId !== undefined && current.customerId !== scope.customerId)) {
        throw new codes.ORDER_NOT_FOUND(id)
      }
      if (expectedVersion !== undefined && current.version !== expectedVersion) {
        throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      }
      // Custom fields change only with a move: a same-status patch that would change them is refused.
      const customFields = fields.patched(current, input)
      if (current.status === status) {
        if (customFields !== undefined) throw new codes.ORDER_INVALID_TRANSITION(current.status, status)
        return { order: current }
      }
      if (!workflow.allows(current.status, status)) {
        throw new codes.ORDER_INVALID_TRANSITION(current.status, status)
      }
      fields.check(customFields)
      const now = new Date().toISOString()
      // History stays in time order even if this instance's clock lags the last writer's.
      const at = now > current.updatedAt ? now : current.updatedAt
      const next: Order = {
        ...current,
        status,
        version: current.version + 1,
        statusHistory: [...current.statusHistory, reason === undefined ? { status, at } : { status, at, reason }],
        updatedAt: at
      }
      if (customFields !== undefined) (next as { customFields?: object }).customFields = customFields
      const event = statusChangedEvent(next, current.status)
      if (await storage.replace(next, current.version, event)) return { order: next, from: current.status, eventId: event.id }
      // Lost a race: re-read and re-check the workflow, unless the caller pinned the version.
      if (expectedVersion !== undefined) throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      lostAt = current.version
    }
    throw new codes.ORDER_VERSION_CONFLICT(id, lostAt)
  }

  return { create, list, move }
}
