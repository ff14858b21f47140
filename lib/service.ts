// The order rules: totals, workflow, idempotency, scope and events; the routes and app.orders share them.
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { decodeCursor, encodeCursor, type NormalizedQuery } from './cursor.js'
import { customFieldRules, freezeCustomFields, type CustomFieldSchemas } from './custom-fields.js'
import { codes } from './errors.js'
import { createEventFeed, createdEvent, statusChangedEvent, type EventPage, type OrderEvent } from './events.js'
import { newOrderId } from './order-id.js'
import type {
  CreateOrderInput, ListEventsQuery, ListOrdersQuery, Order, OrderItem, OrderPage, OrderSchemas, UpdateOrderStatusInput
} from './schemas.js'
import type { IdempotencyClaim, OrderStorage, StorageListQuery } from './storage/types.js'
import { createSubscriptions, type OrderEventHandler, type SubscribeOptions, type SubscriptionStatus } from './subscriptions.js'
import { assertValid, createAjv, validationError, type Validate } from './validation.js'
import type { CompiledWorkflow } from './workflow.js'

/** What a caller may see and touch: with a `customerId`, only that customer's orders. */
export interface OrderScope {
  customerId?: string
}

export interface OrderCallOptions {
  scope?: OrderScope
}

export interface CreateOrderOptions extends OrderCallOptions {
  /** Makes a retried create safe: the same key and body return the first order. */
  idempotencyKey?: string
}

export interface StatusChangedEvent {
  order: Order
  from: string
  to: string
}

/**
 * Listeners run in this process after the change is stored; one that throws or rejects is logged and
 * ignored. Best-effort: a crash after the commit loses them. For durable delivery use the event feed
 * (`listEvents`) and `subscribe`.
 */
export interface OrderEvents {
  created: (order: Order) => unknown
  statusChanged: (event: StatusChangedEvent) => unknown
}

/** The order module without HTTP, decorated as `app.orders`: same validation, same errors. */
export interface OrderService {
  create: (input: CreateOrderInput, options?: CreateOrderOptions) => Promise<Order>
  list: (query?: ListOrdersQuery, options?: OrderCallOptions) => Promise<OrderPage>
  updateStatus: (input: UpdateOrderStatusInput, options?: OrderCallOptions) => Promise<Order>
  on: <E extends keyof OrderEvents>(event: E, listener: OrderEvents[E]) => OrderService
  /** A page of the durable event feed, in feed order. */
  listEvents: (query?: ListEventsQuery) => Promise<EventPage>
  /** Delivers the feed to `handler`, at least once and in feed order, one instance at a time per name. */
  subscribe: (name: string, handler: OrderEventHandler, options?: SubscribeOptions) => OrderService
  /** The subscriptions of this instance and how they are doing. */
  subscriptions: () => SubscriptionStatus[]
}

export interface OrderServiceConfig {
  storage: OrderStorage
  workflow: CompiledWorkflow
  schemas: OrderSchemas
  maxPageSize: number
  idempotencyTtl: number
  eventRetention: number
  log: FastifyBaseLogger
  customFields?: CustomFieldSchemas
}

/** The service's operations on input that has already passed the route schemas. */
export interface OrderOperations {
  createOrder: (input: CreateOrderInput, scope?: OrderScope, idempotencyKey?: string) => Promise<{ order: Order, replayed: boolean }>
  listOrders: (query: ListOrdersQuery, scope?: OrderScope) => Promise<OrderPage>
  updateOrderStatus: (input: UpdateOrderStatusInput, scope?: OrderScope) => Promise<Order>
  service: OrderService
  /** The strict validator of a schema, compiled once and shared by the routes and `app.orders`. */
  validatorOf: (schema: object) => Validate
  /** Starts the subscriptions: the app is ready. */
  start: () => void
  /** Stops the subscriptions after their handlers in flight, and waits for a purge under way. */
  close: () => Promise<void>
}

const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,255}$/
// A lost compare-and-set means another writer made progress; this bounds retries under a cyclic workflow.
const MAX_UPDATE_ATTEMPTS = 32
const EARLIEST = '0000-01-01T00:00:00.000Z'
const LATEST = '9999-12-31T23:59:59.999Z'

function totalOf (items: readonly OrderItem[]): number {
  let total = 0
  for (const { quantity, unitPrice } of items) {
    // Both factors are safe integers, so an unsafe product or sum is exactly an overflow.
    total += quantity * unitPrice
    if (total > Number.MAX_SAFE_INTEGER) throw new codes.ORDER_TOTAL_TOO_LARGE(Number.MAX_SAFE_INTEGER)
  }
  return total
}

/**
 * The body of a create as the server will store it; also what an idempotency key is bound to.
 * `customFields` is the canonical JSON of the body's custom fields, '' when it has none: such a body
 * keeps the fingerprint it had before the option existed, so stored keys stay valid.
 */
function fingerprintOf (input: CreateOrderInput, customFields = ''): string {
  const metadata = input.metadata === undefined ? [] : Object.entries(input.metadata).sort(([a], [b]) => a < b ? -1 : 1)
  const items = input.items.map(({ sku, name, quantity, unitPrice }) => [sku, name ?? null, quantity, unitPrice])
  return createHash('sha256')
    .update(JSON.stringify([input.customerId, input.currency, items, metadata]) + customFields)
    .digest('base64url')
}

/** A date-time filter value as the stored timestamps spell it, so strings compare as instants. */
function toTimestamp (value: string, field: string): string {
  const millis = Date.parse(value)
  if (Number.isNaN(millis)) {
    throw validationError([{ instancePath: `/filter/${field}`, message: 'must match format "date-time"' }], 'body')
  }
  const timestamp = new Date(millis).toISOString()
  return timestamp < EARLIEST || timestamp.startsWith('+') ? (millis < 0 ? EARLIEST : LATEST) : timestamp
}

/**
 * Orders handed to host code (`app.orders`, listeners) are frozen: a storage such as memoryStorage may
 * hold the same objects, and a change made by the host would corrupt it. Responses skip this: the
 * serializer is the only reader there.
 */
function readonly (order: Order): Order {
  if (Object.isFrozen(order)) return order
  for (const item of order.items) Object.freeze(item)
  for (const change of order.statusHistory) Object.freeze(change)
  Object.freeze(order.items)
  Object.freeze(order.statusHistory)
  Object.freeze(order.metadata)
  freezeCustomFields(order)
  return Object.freeze(order)
}

function readonlyEvent (event: OrderEvent): OrderEvent {
  readonly(event.order)
  return Object.freeze(event)
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function'
}

export function createOrderService (config: OrderServiceConfig): OrderOperations {
  const { storage, workflow, schemas, maxPageSize, idempotencyTtl, eventRetention, log } = config
  const defaultLimit = Math.min(20, maxPageSize)
  const listeners: { [E in keyof OrderEvents]: Array<OrderEvents[E]> } = { created: [], statusChanged: [] }

  const ajv = createAjv()
  const validators = new Map<object, Validate>()
  const validatorOf = (schema: object): Validate => {
    let validate = validators.get(schema)
    if (validate === undefined) validators.set(schema, validate = ajv.compile(schema))
    return validate
  }
  const validateCreate = validatorOf(schemas.CreateOrderBody)
  const validateList = validatorOf(schemas.ListOrdersBody)
  const validateUpdate = validatorOf(schemas.UpdateOrderStatusBody)
  const validateListEvents = validatorOf(schemas.ListEventsQuery)

  const feed = createEventFeed({ storage, retention: eventRetention, log, readonly: readonlyEvent })
  const subscriptions = createSubscriptions({ storage, log, readonly: readonlyEvent })

  /** After each stored change: its event is in the feed. */
  function written (): void {
    feed.written()
    subscriptions.wake()
  }
  const customFields = config.customFields === undefined ? undefined : customFieldRules(config.customFields, validatorOf)

  function storageFailure (err: unknown) {
    return new codes.ORDER_STORAGE_UNAVAILABLE({ cause: err })
  }

  async function emit<E extends keyof OrderEvents> (event: E, payload: Parameters<OrderEvents[E]>[0]): Promise<void> {
    for (const listener of listeners[event]) {
      try {
        const result = (listener as (payload: unknown) => unknown)(payload)
        if (isThenable(result)) await result
      } catch (err) {
        log.error({ err, event }, `fastify-order: a "${event}" listener failed; the change is stored`)
      }
    }
  }

  async function createOrder (input: CreateOrderInput, scope?: OrderScope, idempotencyKey?: string) {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new codes.ORDER_INVALID_IDEMPOTENCY_KEY()
    }
    if (scope?.customerId !== undefined && scope.customerId !== input.customerId) {
      throw new codes.ORDER_FORBIDDEN('create an order for another customer')
    }
    const total = totalOf(input.items)
    const now = new Date()
    const createdAt = now.toISOString()
    const order: Order = {
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
    customFields?.fill(order, input)
    let claim: IdempotencyClaim | undefined
    if (idempotencyKey !== undefined) {
      claim = {
        key: JSON.stringify([scope?.customerId ?? null, idempotencyKey]),
        fingerprint: fingerprintOf(input, customFields?.fingerprint(input)),
        expiresAt: new Date(now.getTime() + idempotencyTtl).toISOString()
      }
    }
    let result
    try {
      result = await storage.create(order, createdEvent(order), claim)
    } catch (err) {
      throw storageFailure(err)
    }
    if (result.created) {
      written()
      if (listeners.created.length > 0) await emit('created', readonly(result.order))
      return { order: result.order, replayed: false }
    }
    if ('inProgress' in result) throw new codes.ORDER_IDEMPOTENCY_IN_PROGRESS()
    if (result.fingerprint !== claim!.fingerprint) throw new codes.ORDER_IDEMPOTENCY_KEY_REUSED()
    return { order: result.order, replayed: true }
  }

  async function listOrders (query: ListOrdersQuery, scope?: OrderScope): Promise<OrderPage> {
    const { filter = {}, order = 'desc', limit = defaultLimit, cursor } = query
    const statuses = filter.status === undefined
      ? undefined
      : typeof filter.status === 'string' ? [filter.status] : [...filter.status].sort()
    const ids = filter.ids === undefined ? undefined : [...new Set(filter.ids)].sort()
    const createdFrom = filter.createdFrom === undefined ? undefined : toTimestamp(filter.createdFrom, 'createdFrom')
    const createdTo = filter.createdTo === undefined ? undefined : toTimestamp(filter.createdTo, 'createdTo')
    const normalized: NormalizedQuery = { order, customerId: filter.customerId, statuses, ids, createdFrom, createdTo }
    const after = cursor === undefined ? undefined : decodeCursor(cursor, normalized)
    const scopedCustomer = scope?.customerId
    if (scopedCustomer !== undefined && filter.customerId !== undefined && filter.customerId !== scopedCustomer) {
      return { items: [], nextCursor: null }
    }
    const storageQuery: StorageListQuery = {
      customerId: scopedCustomer ?? filter.customerId,
      statuses,
      ids,
      createdFrom,
      createdTo,
      order,
      after,
      limit: limit + 1
    }
    let items
    try {
      items = await storage.list(storageQuery)
    } catch (err) {
      throw storageFailure(err)
    }
    if (items.length <= limit) return { items, nextCursor: null }
    items = items.slice(0, limit)
    return { items, nextCursor: encodeCursor(items[limit - 1]!, normalized) }
  }

  async function updateOrderStatus (input: UpdateOrderStatusInput, scope?: OrderScope): Promise<Order> {
    const { id, status, expectedVersion, reason } = input
    let lostAt = 0
    for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
      let current
      try {
        current = await storage.get(id)
      } catch (err) {
        throw storageFailure(err)
      }
      if (current === undefined || (scope?.customerId !== undefined && current.customerId !== scope.customerId)) {
        throw new codes.ORDER_NOT_FOUND(id)
      }
      if (expectedVersion !== undefined && current.version !== expectedVersion) {
        throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      }
      // Custom fields change only with a move: a same-status patch that would change them is refused.
      const fields = customFields?.patched(current, input)
      if (current.status === status) {
        if (fields !== undefined) throw new codes.ORDER_INVALID_TRANSITION(current.status, status)
        return current
      }
      if (!workflow.allows(current.status, status)) {
        throw new codes.ORDER_INVALID_TRANSITION(current.status, status)
      }
      if (fields !== undefined) customFields!.check(fields)
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
      if (fields !== undefined) customFields!.set(next, fields)
      let replaced
      try {
        replaced = await storage.replace(next, current.version, statusChangedEvent(next, current.status))
      } catch (err) {
        throw storageFailure(err)
      }
      if (replaced) {
        written()
        if (listeners.statusChanged.length > 0) {
          await emit('statusChanged', Object.freeze({ order: readonly(next), from: current.status, to: status }))
        }
        return next
      }
      // Lost a race: re-read and re-check the workflow, unless the caller pinned the version.
      if (expectedVersion !== undefined) throw new codes.ORDER_VERSION_CONFLICT(id, expectedVersion)
      lostAt = current.version
    }
    throw new codes.ORDER_VERSION_CONFLICT(id, lostAt)
  }

  const service: OrderService = {
    async create (input, options) {
      assertValid<CreateOrderInput>(validateCreate, input)
      // A copy, so the stored order shares nothing the caller may change or see frozen later.
      // Spread defines own properties, so a "__proto__" metadata key stays data.
      const own = { ...input, items: input.items.map(item => ({ ...item })), metadata: { ...input.metadata } }
      customFields?.own(own)
      return readonly((await createOrder(own, options?.scope, options?.idempotencyKey)).order)
    },
    async list (query = {}, options) {
      assertValid<ListOrdersQuery>(validateList, query)
      const page = await listOrders(query, options?.scope)
      page.items.forEach(readonly)
      return page
    },
    async updateStatus (input, options) {
      assertValid<UpdateOrderStatusInput>(validateUpdate, input)
      const own = customFields === undefined ? input : customFields.own({ ...input })
      return readonly(await updateOrderStatus(own, options?.scope))
    },
    on (event, listener) {
      if (!Object.hasOwn(listeners, event)) {
        throw new codes.ORDER_INVALID_LISTENER(`unknown event ${JSON.stringify(event)}; use "created" or "statusChanged"`)
      }
      if (typeof listener !== 'function') {
        throw new codes.ORDER_INVALID_LISTENER(`the "${event}" listener must be a function`)
      }
      listeners[event].push(listener as never)
      return service
    },
    async listEvents (query = {}) {
      assertValid<ListEventsQuery>(validateListEvents, query)
      return feed.listEvents(query)
    },
    subscribe (name, handler, options) {
      subscriptions.subscribe(name, handler, options)
      return service
    },
    subscriptions: () => subscriptions.subscriptions()
  }

  return {
    createOrder,
    listOrders,
    updateOrderStatus,
    service,
    validatorOf,
    start: subscriptions.start,
    async close () {
      await subscriptions.close()
      await feed.close()
    }
  }
}
