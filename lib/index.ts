// fastify-order: the plugin. Checks options, decorates app.orders, registers the routes.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { codes } from './errors.js'
import { checkOptions, type OrderPluginOptions } from './options.js'
import { orderRoutes } from './http/routes.js'
import { deskRoutes } from './desk/desk-routes.js'
import { buildOrderSchemas, type OrderSchemas } from './http/schemas.js'
import { createOrderService, type OrderService } from './service.js'
import { loadTelemetry } from './telemetry/telemetry.js'
import { createFanOut, type FanOut } from './feed/fan-out.js'
import { stream as streamLimits } from './limits.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The order module without HTTP: create, list, updateStatus, change and events. */
    orders: OrderService
  }
}

async function fastifyOrder (app: FastifyInstance, options: OrderPluginOptions): Promise<void> {
  // fastify-plugin shares app.orders with the host, so a second register here would clash on it.
  if (app.hasDecorator('orders')) {
    throw new codes.ORDER_INVALID_OPTIONS('the plugin is already registered on this instance (or a parent of it): app.orders exists. To serve the routes under two prefixes, register each in an encapsulated context of its own: app.register(async child => { await child.register(orderPlugin, { prefix: \'/eu\' }) }); each child then has its own child.orders')
  }
  const config = checkOptions(options)
  const { storage, workflow, maxItems, maxPageSize, customFields } = config
  await storage.init?.()

  // Typed with the custom fields the host declared in OrderCustomFields: the options' type ties them to
  // the schemas it gave, a link the compiler cannot follow from here.
  const schemas = buildOrderSchemas({ statuses: workflow.statuses, maxItems, maxPageSize, customFields, changes: config.changes !== undefined }) as unknown as OrderSchemas
  // Spans and metrics through the host's OpenTelemetry setup, when @opentelemetry/api is installed.
  const telemetry = await loadTelemetry()
  let fanOut: FanOut | undefined
  const service = createOrderService({ ...config, schemas, log: app.log, telemetry, written: () => { fanOut?.wake() } })
  app.decorate('orders', service.orders)
  if (config.stream !== undefined) {
    // One feed reader for every open stream of this instance; the streams end before the storage does.
    const { listEvents } = service.orders
    fanOut = createFanOut({
      read: async (after, limit) => (await listEvents(after === undefined ? { limit } : { after, limit })).items,
      pollInterval: config.stream.pollInterval,
      heartbeat: config.stream.heartbeatInterval,
      readSize: streamLimits.readSize,
      history: streamLimits.history,
      log: app.log
    })
    const streams = fanOut
    app.addHook('preClose', () => streams.close())
  }
  // Subscriptions run while the app is up; they stop before onClose hooks, which may end the storage.
  app.addHook('onReady', async () => { service.start() })
  app.addHook('preClose', async () => { await service.close() })

  // fastify-plugin shares `app.orders` with the host but ignores `prefix`, so the routes get
  // an encapsulated child of their own that carries it.
  await app.register(orderRoutes, {
    prefix: config.prefix,
    rules: service.rules,
    workflow,
    changes: config.changes,
    validatorOf: service.validatorOf,
    telemetry,
    schemas,
    bodyLimit: config.bodyLimit,
    authorize: config.authorize,
    hooks: config.hooks,
    stream: fanOut === undefined ? undefined : { fanOut, maxClients: config.stream!.maxClients, deskHooks: config.desk?.hooks }
  })
  if (config.desk !== undefined) {
    await app.register(deskRoutes, { prefix: config.prefix, prefixPath: config.prefix, desk: config.desk, workflow, changes: config.changes !== undefined })
  }
}

export const orderPlugin = fp(fastifyOrder, { name: 'fastify-order', fastify: '5.x' })
export default orderPlugin

export { codes } from './errors.js'
export { memoryStorage } from './storage/memory/memory-storage.js'
export { defaultWorkflow, type Workflow } from './orders/workflow.js'
export { workflowDiagram } from './orders/workflow-diagram.js'
export type { GuardDecision, TransitionGuard, TransitionMove, WorkflowGuards } from './orders/guards.js'
export type { OrderStatus, OrderStatuses, StatusOf } from './orders/statuses.js'
export {
  buildOrderSchemas, schemas, OrderSchema, OrderErrorSchema, OrderItemSchema, CreateOrderBodySchema,
  ListOrdersBodySchema, OrderPageSchema, UpdateOrderStatusBodySchema, ChangeOrderBodySchema, ChangeActionSchema, OrderChangeSchema, PaymentSchema
} from './http/schemas.js'
export type {
  Order, OrderItem, StatusChange, CreateOrderInput, ListOrdersQuery, ListOrdersFilter, OrderPage,
  UpdateOrderStatusInput, OrderErrorBody, OrderSchemas, ListEventsQuery, NewOrder, DeadLettersQuery, RedeliverQuery,
  OrderWithChanges, ChangeAction, ChangeOrderInput, OrderPayment, OrderChange, OrderChanges
} from './http/schemas.js'
export type { StreamOptions } from './feed/stream-options.js'
export type { ChangeGuard, ChangesOptions, OrderChangeProposal } from './orders/change-options.js'
export type { OrderCustomFields, CustomFieldsPatch } from './custom-fields/types.js'
export type { OrderPluginOptions } from './options.js'
export type { DeskOptions } from './desk/desk-options.js'
export type { Authorize, OrderHooks, OrderOperation } from './http/routes.js'
export type { MysqlTransactionConnection, OrderService, TransactionClient } from './service.js'
export type { OrderCallOptions } from './orders/rules.js'
export type { OrderScope } from './orders/scope.js'
export type { OrderListeners, OrderMove } from './feed/listeners.js'
export type { OrderEvent, OrderChangedEvent, OrderChangeRecord, OrderReplacedEvent, EventPage } from './feed/events.js'
export type { FeedHealth } from './feed/feed-stall.js'
export type {
  OrderEventContext, OrderEventHandler, SubscribeOptions, SubscriptionStatus, SubscriptionLag, RetryPolicy, DeadLetter, DeadLetterPage
} from './subscriptions/subscriptions.js'
export type { OrderStorage, JoinedStorage, CreateResult, IdempotencyClaim, StorageListQuery, ChangesCapability, ReplicaReads, ReplicaStatus, ReadView, ViewedPage } from './storage/order-storage.js'
