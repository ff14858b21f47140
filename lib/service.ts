// app.orders wired: strict validators, the rules, listeners, the feed, retention, subscriptions, the host's transaction and their lifecycle.
import type { FastifyBaseLogger } from 'fastify'
import { withValueLimits } from './custom-fields/value-check.js'
import { customFieldRules, type CustomFieldRules } from './custom-fields/values.js'
import type { CustomFieldSchemas } from './custom-fields/types.js'
import { codes } from './errors.js'
import { isEventId, type EventPage, type OrderEvent } from './feed/events.js'
import { feedNeverHeldBack, watchFeedStall, type FeedHealth } from './feed/feed-stall.js'
import { loggableFailure } from './feed/describe-failure.js'
import { freezer, type Freezer } from './orders/freeze.js'
import { turnsByKey } from './in-turn.js'
import { createListeners, type OrderListeners } from './feed/listeners.js'
import { createRetention } from './feed/retention.js'
import { orderRules, type OrderCallOptions, type OrderRules } from './orders/rules.js'
import { order as limits, page, subscription } from './limits.js'
import type {
  ChangeOrderInput, CreateOrderInput, DeadLettersQuery, ListEventsQuery, ListOrdersQuery, Order, OrderPage, OrderSchemas, OrderWithChanges, RedeliverQuery, UpdateOrderStatusInput
} from './http/schemas.js'
import type { ChangesConfig } from './orders/change-options.js'
import { checkScope } from './orders/scope.js'
import { hasCapability, storageMethods, type ChangesCapability, type JoinedStorage, type OrderStorage, type ReplicaReads, type ReplicaStatus } from './storage/order-storage.js'
import { unavailableOnFailure } from './storage/unavailable.js'
import { createSubscriptions, type DeadLetterPage, type OrderEventHandler, type SubscribeOptions, type Subscriptions, type SubscriptionStatus } from './subscriptions/subscriptions.js'
import { assertValid, compileStrict, forCaller, validationError, type Validate } from './http/validation.js'
import type { Telemetry } from './telemetry/telemetry.js'
import type { CompiledWorkflow } from './orders/workflow.js'

/** A client inside a transaction the host opened: a `pg` client from `pool.connect()`, a `pg.Client`, a PGlite transaction. */
export interface TransactionClient {
  query: (text: string, params: unknown[]) => Promise<{ rows: unknown[] }>
}

/** A `mysql2/promise` connection from `pool.getConnection()` on which the host ran `beginTransaction()`. */
export interface MysqlTransactionConnection {
  query: (...args: any[]) => Promise<unknown>
  beginTransaction: () => Promise<void>
}

/** The order module without HTTP, decorated as `app.orders`: the routes' validation, scope, rules and errors. */
export interface OrderService {
  /** Creates an order; with an `idempotencyKey`, a retry with the same input returns the first order. */
  create: (input: CreateOrderInput, options?: OrderCallOptions) => Promise<Order>
  list: (query?: ListOrdersQuery, options?: OrderCallOptions) => Promise<OrderPage>
  /** The order with this id in the caller's scope; ORDER_NOT_FOUND when there is none. */
  get: (id: string, options?: OrderCallOptions) => Promise<Order>
  updateStatus: (input: UpdateOrderStatusInput, options?: OrderCallOptions) => Promise<Order>
  /**
   * With the `changes` option on: applies the actions to the order, all or none, or with `preview`
   * answers the order as they would leave it and stores nothing; with an `idempotencyKey`, a retry
   * with the same input returns the order as the first call left it. ORDER_INVALID_OPTIONS while
   * changes are off.
   */
  change: (input: ChangeOrderInput, options?: OrderCallOptions) => Promise<OrderWithChanges>
  /**
   * The same calls, run on `client` inside a transaction the host opened on it (a `pg` client from
   * `pool.connect()`, a PGlite transaction, or a `mysql2` connection from `pool.getConnection()` after
   * `beginTransaction()`): the order, its event and the host's writes commit or
   * roll back together. Listeners of these changes run once the plugin sees the transaction commit,
   * never if it rolls back. ORDER_INVALID_OPTIONS where the storage cannot join a transaction.
   */
  withTransaction: (client: TransactionClient | MysqlTransactionConnection) => Pick<OrderService, 'create' | 'list' | 'get' | 'updateStatus' | 'change'>
  on: <E extends keyof OrderListeners>(event: E, listener: OrderListeners[E]) => OrderService
  /** A page of the durable event feed, in feed order. */
  listEvents: (query?: ListEventsQuery) => Promise<EventPage>
  /** Delivers the feed to `handler`, at least once and in feed order, one instance at a time per name. */
  subscribe: (name: string, handler: OrderEventHandler, options?: SubscribeOptions) => OrderService
  /** The subscriptions of this instance and how they are doing. */
  subscriptions: () => SubscriptionStatus[]
  /**
   * How long the event feed is held back by the oldest transaction still open (PostgreSQL), and that
   * transaction's backend pid when the storage can tell; `{ heldBackSeconds: 0 }` while nothing holds it.
   */
  feedHealth: () => Promise<FeedHealth>
  /** A page of the dead letters of subscription `name`, in feed order: events whose retry schedule ran out. */
  deadLetters: (name: string, query?: DeadLettersQuery) => Promise<DeadLetterPage>
  /** Puts dead letters of `name` (those of `eventIds`, or all) back to be delivered with a fresh schedule; how many it found. */
  redeliver: (name: string, query?: RedeliverQuery) => Promise<{ count: number }>
  /** How each replica of the storage is doing, in the order given (none without replicas): for health checks. */
  replicas: () => ReplicaStatus[]
}

export interface OrderServiceConfig {
  storage: OrderStorage
  workflow: CompiledWorkflow
  schemas: OrderSchemas
  maxPageSize: number
  idempotencyTtl: number
  eventRetention: number
  log: FastifyBaseLogger
  customFields?: CustomFieldSchemas | undefined
  /** Milliseconds a transaction may hold the feed back before a warning; 0: never. */
  feedStallWarning: number
  telemetry: Telemetry
  changes: ChangesConfig | undefined
  /** Told of each change this instance stored (and committed), before its listeners: the event stream reads the feed at once. */
  written?: (() => void) | undefined
}

/**
 * The strict validator of each schema, compiled once and shared by the routes and app.orders. With
 * custom fields, the bodies that carry them are checked first for values no storage could keep.
 */
function strictValidators (schemas: OrderSchemas, customFields: CustomFieldSchemas | undefined): (schema: object) => Validate {
  const validators = new Map<object, Validate>()
  const limited = new Set<object>(customFields === undefined ? [] : [schemas.CreateOrderBody, schemas.UpdateOrderStatusBody, schemas.ChangeOrderBody])
  return schema => {
    let validate = validators.get(schema)
    if (validate === undefined) {
      validate = compileStrict(schema)
      validators.set(schema, validate = limited.has(schema) ? withValueLimits(validate) : validate)
    }
    return validate
  }
}

type OrderCalls = Pick<OrderService, 'create' | 'list' | 'get' | 'updateStatus' | 'change'>

// The rules word their validation errors for a route's body; app.orders has none and names the argument.
const asInput = (err: unknown): never => { throw forCaller(err, 'input') }
const asQuery = (err: unknown): never => { throw forCaller(err, 'query') }

/**
 * Calls made at once on one host transaction's client run one after the other, in the order made, and
 * none sees another's half done.
 */
const inTurn = turnsByKey()

/** The calls over `rules`, checking input like the routes do, copying what is stored and freezing what is handed out. */
/** What the calls over the rules need: validators, custom-field rules, the freezer and the telemetry. */
interface CallsConfig {
  validatorOf: (schema: object) => Validate
  schemas: OrderSchemas
  fields: CustomFieldRules
  freeze: Freezer
  telemetry: Telemetry
  changesOn: boolean
}

/**
 * The calls over `rules`, checking input like the routes do, copying what is stored and freezing what
 * is handed out; each a span of its own, validation included.
 */
function callsOf (rules: OrderRules, { validatorOf, schemas, fields, freeze, telemetry, changesOn }: CallsConfig): OrderCalls {
  const validateCreate = validatorOf(schemas.CreateOrderBody)
  const validateList = validatorOf(schemas.ListOrdersBody)
  const validateUpdate = validatorOf(schemas.UpdateOrderStatusBody)
  const validateChange = validatorOf(schemas.ChangeOrderBody)
  return {
    create: (input, options) => telemetry.span('order.create', async span => {
      assertValid<CreateOrderInput>(validateCreate, input, 'input')
      // A copy, so the stored order shares nothing the caller may change or see frozen later.
      // Spread defines own properties, so a "__proto__" metadata key stays data.
      const own = fields.own({ ...input, items: input.items.map(item => ({ ...item })), metadata: { ...input.metadata } })
      const scope = checkScope(options?.scope, 'the scope option of app.orders.create')
      const { order } = await rules.create(own, { scope, idempotencyKey: options?.idempotencyKey, onConsistency: onConsistencyOf(options) }).catch(asInput)
      span.setOrderId(order.id)
      return freeze.order(order)
    }),
    list: (query = {}, options) => telemetry.span('order.list', async () => {
      assertValid<ListOrdersQuery>(validateList, query, 'query')
      const scope = checkScope(options?.scope, 'the scope option of app.orders.list')
      const result = await rules.list(query, { scope, consistency: options?.consistency, primary: options?.primary }).catch(asQuery)
      result.items.forEach(freeze.order)
      return result
    }),
    // A page of the one order with this id: the same scope, reads and telemetry as any page.
    get: (id, options) => telemetry.span('order.list', async () => {
      if (typeof id !== 'string') throw validationError([{ instancePath: '', message: 'must be string' }], 'id')
      const scope = checkScope(options?.scope, 'the scope option of app.orders.get')
      // An id no order could have (empty, or longer than any) names none.
      const { items: [order] } = id.length === 0 || id.length > limits.idLength ? { items: [] } : await rules.list({ filter: { ids: [id] }, limit: 1 }, { scope })
      if (order === undefined) throw new codes.ORDER_NOT_FOUND(id)
      return freeze.order(order)
    }),
    updateStatus: (input, options) => telemetry.span('order.update_status', async span => {
      assertValid<UpdateOrderStatusInput>(validateUpdate, input, 'input')
      const scope = checkScope(options?.scope, 'the scope option of app.orders.updateStatus')
      const onConsistency = onConsistencyOf(options)
      return freeze.order(await rules.updateStatus(fields.own({ ...input }), { scope, onConsistency, found: order => { span.setOrderId(order.id) } }).catch(asInput))
    }),
    change: (input, options) => telemetry.span('order.change', async span => {
      if (!changesOn) throw new codes.ORDER_INVALID_OPTIONS('app.orders.change needs the changes option: register the plugin with changes: true')
      assertValid<ChangeOrderInput>(validateChange, input, 'input')
      const scope = checkScope(options?.scope, 'the scope option of app.orders.change')
      // A copy: the applied actions are stored in the order's changes, and share nothing with the caller.
      const own = { ...input, actions: input.actions.map(action => action.type === 'addItem' ? { ...action, item: fields.own({ ...action.item }) } : { ...action }) }
      const { order } = await rules.change(own, { scope, idempotencyKey: options?.idempotencyKey, onConsistency: onConsistencyOf(options), found: order => { span.setOrderId(order.id) } }).catch(asInput)
      return freeze.order(order) as OrderWithChanges
    })
  }
}

/** The `onConsistency` option of a write of app.orders, checked. */
function onConsistencyOf (options: OrderCallOptions | undefined): OrderCallOptions['onConsistency'] {
  const onConsistency = options?.onConsistency
  if (onConsistency !== undefined && typeof onConsistency !== 'function') throw new codes.ORDER_INVALID_OPTIONS('the onConsistency option of app.orders must be a function (token) => void')
  return onConsistency
}

/** The storage's replica reads, counted by where each page was read (and told to the page's span); failures are 503. */
function countedReads (reads: ReplicaReads | undefined, telemetry: Telemetry): ReplicaReads | undefined {
  if (reads === undefined) return undefined
  const { list } = unavailableOnFailure(reads, ['list'])
  return {
    ...reads,
    position: unavailableOnFailure(reads, ['position']).position,
    async list (query, view) {
      const page = await list(query, view)
      telemetry.read(page.replica)
      return page
    }
  }
}

/**
 * What follows a change made in the host's transaction waits for its commit, and does not run if it
 * rolls back; closing stops the wait (without waiting for a look under way, which on PGlite waits for
 * that transaction to end).
 */
function afterCommit (joined: JoinedStorage, event: OrderEvent, stored: (event: OrderEvent) => Promise<void> | undefined, closing: AbortSignal, log: FastifyBaseLogger): void {
  joined.settled(event.id, closing).then(async committed => {
    if (committed && !closing.aborted) await stored(event)
  }, err => {
    if (!closing.aborted) log.error({ err: loggableFailure(err) }, 'fastify-order: could not learn whether a transaction committed; its listeners did not run')
  })
}

/** app.orders.listEvents over `storage`'s feed: validated like every call, never a silent skip. */
function listEventsOf (storage: OrderStorage, validate: Validate, freeze: Freezer): OrderService['listEvents'] {
  const feed = hasCapability(storage, 'feed') ? unavailableOnFailure(storage, ['listEvents']) : undefined
  return async (query = {}) => {
    assertValid<ListEventsQuery>(validate, query, 'query')
    if (feed === undefined) throw new codes.ORDER_INVALID_OPTIONS(`app.orders.listEvents needs a storage with the event feed; this storage has no ${storageMethods.feed[0]} method`)
    const { after, limit = page.defaultEvents } = query
    if (after !== undefined && !isEventId(after)) throw new codes.ORDER_EVENT_NOT_FOUND(after)
    const items = await feed.listEvents({ after, limit })
    if (items === undefined) throw new codes.ORDER_EVENT_NOT_FOUND(after)
    return { items: items.map(freeze.event) }
  }
}

/** Why a call about subscriptions cannot be made on this storage. */
function noSubscriptions (call: string): Error {
  return new codes.ORDER_INVALID_SUBSCRIPTION(`${call}: subscriptions need a storage with them; this storage has no ${storageMethods.subscriptions[0]} method`)
}

/** app.orders.deadLetters and redeliver over the subscriptions: validated like every call. */
function deadLetterCallsOf (subscriptions: Subscriptions | undefined, validatorOf: (schema: object) => Validate, schemas: OrderSchemas): Pick<OrderService, 'deadLetters' | 'redeliver'> {
  const validateDeadLetters = validatorOf(schemas.DeadLettersQuery)
  const validateRedeliver = validatorOf(schemas.RedeliverQuery)
  return {
    async deadLetters (name, query = {}) {
      assertValid<DeadLettersQuery>(validateDeadLetters, query, 'query')
      if (subscriptions === undefined) throw noSubscriptions('deadLetters')
      const { after, limit = subscription.defaultDeadLetters } = query
      if (after !== undefined && !isEventId(after)) throw new codes.ORDER_EVENT_NOT_FOUND(after)
      return subscriptions.deadLetters(name, { after, limit })
    },
    async redeliver (name, query = {}) {
      assertValid<RedeliverQuery>(validateRedeliver, query, 'query')
      if (subscriptions === undefined) throw noSubscriptions('redeliver')
      // An id that is no event id names no dead letter.
      return subscriptions.redeliver(name, query.eventIds?.filter(isEventId))
    }
  }
}

/**
 * Builds app.orders and what the routes share with it: the rules (the only place with business
 * rules, so the two never disagree) and the strict validator of each schema, compiled once.
 */
export function createOrderService (config: OrderServiceConfig) {
  const { storage, workflow, schemas, maxPageSize, idempotencyTtl, eventRetention, log, telemetry } = config

  const validatorOf = strictValidators(schemas, config.customFields)

  const fields = customFieldRules(config.customFields, validatorOf)
  const freeze = freezer(fields)
  const listeners = createListeners(log)
  const retention = createRetention({ storage, eventRetention, log })
  const subscriptions = hasCapability(storage, 'subscriptions')
    ? createSubscriptions({ storage, log, readonly: freeze.event, eventRetention, telemetry })
    : undefined
  // Each subscription's lag, from the instance holding its lease: the others do not read it.
  telemetry.observeLag(() => (subscriptions?.subscriptions() ?? []).filter(({ active }) => active).map(({ name, lag }) => ({ subscription: name, events: lag.events })))

  // How long the feed is held back: the storage says, where it can be (PostgreSQL); never otherwise.
  const feedHealth = storage.feedHealth === undefined
    ? feedNeverHeldBack
    : unavailableOnFailure(storage as Required<Pick<OrderStorage, 'feedHealth'>>, ['feedHealth']).feedHealth
  const stallWatch = watchFeedStall({ read: feedHealth, feedStallWarning: config.feedStallWarning, log })
  telemetry.observeHeldBack(async () => (await feedHealth()).heldBackSeconds)
  const listEvents = listEventsOf(storage, validatorOf(schemas.ListEventsQuery), freeze)

  /**
   * What follows a stored (and committed) change: the feed's upkeep, the counters, then the listeners;
   * a promise only when there are listeners to wait for, so a change without any costs no turn.
   */
  function stored (event: OrderEvent): Promise<void> | undefined {
    retention.written()
    subscriptions?.wake()
    config.written?.()
    if (event.type === 'created') {
      telemetry.created()
      return listeners.has('created') ? listeners.emit('created', freeze.order(event.order)) : undefined
    }
    if (event.type === 'changed') {
      return listeners.has('changed') ? listeners.emit('changed', freeze.event(event) as typeof event) : undefined
    }
    telemetry.statusChanged(event.from, event.order.status)
    return listeners.has('statusChanged')
      ? listeners.emit('statusChanged', Object.freeze({ order: freeze.order(event.order), from: event.from, to: event.order.status }))
      : undefined
  }

  const { changes } = config
  // Register checks the storage reads change claims when changes are on. A joined storage reads them in
  // the host's transaction when it can; one that cannot reads those committed, through the storage.
  const claimsOf = (orders: Partial<ChangesCapability>) => changes === undefined
    ? {}
    : unavailableOnFailure((orders.readChangeClaim === undefined ? storage : orders) as ChangesCapability, ['readChangeClaim'])
  const rulesOf = (orders: Pick<OrderStorage, 'create' | 'get' | 'list' | 'replace'> & Partial<ChangesCapability>, changed: (event: OrderEvent) => Promise<void> | void, reads?: ReplicaReads) =>
    orderRules({
      reads,
      storage: { ...unavailableOnFailure(orders, ['create', 'get', 'list', 'replace']), ...claimsOf(orders) },
      workflow,
      fields,
      freeze: freeze.order,
      maxPageSize,
      idempotencyTtl,
      changed,
      changes
    })

  // Outside a transaction the change is committed: the listeners run before the caller gets the order.
  // Pages may come from replicas only here: a host's transaction reads and writes on its own client.
  const rules = rulesOf(storage, stored, countedReads(storage.replicas, telemetry))
  const replicas = () => storage.replicas?.health() ?? []
  telemetry.observeReplicaLag(replicas)

  const closing = new AbortController()

  const calls = (rules: OrderRules) => callsOf(rules, { validatorOf, schemas, fields, freeze, telemetry, changesOn: changes !== undefined })

  const orders: OrderService = {
    ...calls(rules),
    withTransaction (client) {
      if (!hasCapability(storage, 'transactions')) {
        throw new codes.ORDER_INVALID_OPTIONS('app.orders.withTransaction needs a storage that can join the host\'s transaction: postgresStorage can, memoryStorage cannot; with this storage, call app.orders.create, list and updateStatus directly')
      }
      const joined = storage.joinTransaction(client)
      const { create, list, get, updateStatus, change } = calls(rulesOf(joined, event => { afterCommit(joined, event, stored, closing.signal, log) }))
      return {
        create: (input, options) => inTurn(client, () => create(input, options)),
        list: (query, options) => inTurn(client, () => list(query, options)),
        get: (id, options) => inTurn(client, () => get(id, options)),
        updateStatus: (input, options) => inTurn(client, () => updateStatus(input, options)),
        change: (input, options) => inTurn(client, () => change(input, options))
      }
    },
    on (event, listener) {
      listeners.on(event, listener)
      return orders
    },
    listEvents,
    subscribe (name, handler, options) {
      if (subscriptions === undefined) throw noSubscriptions('subscribe')
      subscriptions.subscribe(name, handler, options)
      return orders
    },
    subscriptions: () => subscriptions?.subscriptions() ?? [],
    feedHealth,
    ...deadLetterCallsOf(subscriptions, validatorOf, schemas),
    replicas
  }

  return {
    orders,
    rules,
    validatorOf,
    /** Starts the subscriptions and the watch of the feed: the app is ready. */
    start () {
      subscriptions?.start()
      stallWatch.start()
    },
    /** Stops the subscriptions after their handlers in flight, and waits for a purge under way. */
    async close () {
      closing.abort()
      storage.replicas?.close()
      telemetry.close()
      await stallWatch.close()
      await subscriptions?.close()
      await retention.close()
    }
  }
}
