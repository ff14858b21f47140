// app.orders: the order module without HTTP. Validates like the routes, copies what it stores, freezes what it hands out.
import type { CustomFieldRules } from './custom-fields/rules.js'
import type { EventPage } from './events.js'
import type { Freezer } from './freeze.js'
import type { Listeners, OrderEvents } from './listeners.js'
import type { CreateOrderInput, ListEventsQuery, ListOrdersQuery, Order, OrderPage, OrderSchemas, UpdateOrderStatusInput } from './schemas.js'
import { checkScope, type OrderScope } from './scope.js'
import type { OrderEventHandler, SubscribeOptions, Subscriptions, SubscriptionStatus } from './subscriptions.js'
import { assertValid, type Validate } from './validation.js'

/** What app.orders and the routes run, on input that has passed the schemas. */
export interface OrderOperations {
  createOrder: (input: CreateOrderInput, scope?: OrderScope, idempotencyKey?: string) => Promise<{ order: Order, replayed: boolean }>
  listOrders: (query: ListOrdersQuery, scope?: OrderScope) => Promise<OrderPage>
  updateOrderStatus: (input: UpdateOrderStatusInput, scope?: OrderScope) => Promise<Order>
}

export interface OrderCallOptions {
  scope?: OrderScope
}

export interface CreateOrderOptions extends OrderCallOptions {
  /** Makes a retried create safe: the same key and body return the first order. */
  idempotencyKey?: string
}

/** Creating, listing and moving orders: same validation, scope and errors as the routes. */
export interface OrderCalls {
  create: (input: CreateOrderInput, options?: CreateOrderOptions) => Promise<Order>
  list: (query?: ListOrdersQuery, options?: OrderCallOptions) => Promise<OrderPage>
  updateStatus: (input: UpdateOrderStatusInput, options?: OrderCallOptions) => Promise<Order>
}

/** A client inside a transaction the host opened: a `pg` client from `pool.connect()`, a `pg.Client`, a PGlite transaction. */
export interface TransactionClient {
  query: (text: string, params: unknown[]) => Promise<{ rows: unknown[] }>
}

/** The order module without HTTP, decorated as `app.orders`: same validation, same errors. */
export interface OrderService extends OrderCalls {
  /**
   * The same calls, run on `client` inside a transaction the host opened on it (a `pg` client from
   * `pool.connect()`, or a PGlite transaction): the order, its event and the host's writes commit or
   * roll back together. Listeners of these changes run once the plugin sees the transaction commit,
   * never if it rolls back. ORDER_INVALID_OPTIONS where the storage cannot join a transaction.
   */
  withTransaction: (client: TransactionClient) => OrderCalls
  on: <E extends keyof OrderEvents>(event: E, listener: OrderEvents[E]) => OrderService
  /** A page of the durable event feed, in feed order. */
  listEvents: (query?: ListEventsQuery) => Promise<EventPage>
  /** Delivers the feed to `handler`, at least once and in feed order, one instance at a time per name. */
  subscribe: (name: string, handler: OrderEventHandler, options?: SubscribeOptions) => OrderService
  /** The subscriptions of this instance and how they are doing. */
  subscriptions: () => SubscriptionStatus[]
}

export interface AppOrdersConfig {
  operations: OrderOperations
  schemas: OrderSchemas
  validatorOf: (schema: object) => Validate
  fields: CustomFieldRules
  freeze: Freezer
  listeners: Listeners
  listEvents: (query: ListEventsQuery) => Promise<EventPage>
  subscriptions: Subscriptions
  /** The operations inside the host's transaction on `client`. */
  transactional: (client: unknown) => OrderOperations
}

export function appOrders (config: AppOrdersConfig): OrderService {
  const { schemas, validatorOf, fields, freeze, listeners, subscriptions, transactional } = config
  const validateCreate = validatorOf(schemas.CreateOrderBody)
  const validateList = validatorOf(schemas.ListOrdersBody)
  const validateUpdate = validatorOf(schemas.UpdateOrderStatusBody)
  const validateListEvents = validatorOf(schemas.ListEventsQuery)

  /** The calls over `operations`, checking input like the routes do. */
  const callsOf = (operations: OrderOperations): OrderCalls => ({
    async create (input, options) {
      assertValid<CreateOrderInput>(validateCreate, input)
      // A copy, so the stored order shares nothing the caller may change or see frozen later.
      // Spread defines own properties, so a "__proto__" metadata key stays data.
      const own = fields.own({ ...input, items: input.items.map(item => ({ ...item })), metadata: { ...input.metadata } })
      return freeze.order((await operations.createOrder(own, checkScope(options?.scope, 'the scope option of app.orders.create'), options?.idempotencyKey)).order)
    },
    async list (query = {}, options) {
      assertValid<ListOrdersQuery>(validateList, query)
      const page = await operations.listOrders(query, checkScope(options?.scope, 'the scope option of app.orders.list'))
      page.items.forEach(freeze.order)
      return page
    },
    async updateStatus (input, options) {
      assertValid<UpdateOrderStatusInput>(validateUpdate, input)
      return freeze.order(await operations.updateOrderStatus(fields.own({ ...input }), checkScope(options?.scope, 'the scope option of app.orders.updateStatus')))
    }
  })

  const service: OrderService = {
    ...callsOf(config.operations),
    withTransaction: client => callsOf(transactional(client)),
    on (event, listener) {
      listeners.on(event, listener)
      return service
    },
    async listEvents (query = {}) {
      assertValid<ListEventsQuery>(validateListEvents, query)
      return config.listEvents(query)
    },
    subscribe (name, handler, options) {
      subscriptions.subscribe(name, handler, options)
      return service
    },
    subscriptions: () => subscriptions.subscriptions()
  }
  return service
}
