// fastify-order: the plugin. Checks options, decorates app.orders, registers the routes.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { checkOptions, type OrderPluginOptions } from './options.js'
import { orderRoutes } from './routes.js'
import { buildOrderSchemas, type OrderSchemas } from './schemas.js'
import type { OrderService } from './app-orders.js'
import { createOrderModule } from './module.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The order module without HTTP: create, list, updateStatus and events. */
    orders: OrderService
  }
}

async function fastifyOrder (app: FastifyInstance, options: OrderPluginOptions): Promise<void> {
  const config = checkOptions(options)
  const { storage, workflow, maxItems, maxPageSize, customFields } = config
  await storage.init?.()

  // Typed with the custom fields the host declared in OrderCustomFields: the options' type ties them to
  // the schemas it gave, a link the compiler cannot follow from here.
  const schemas = buildOrderSchemas({ statuses: workflow.statuses, maxItems, maxPageSize, customFields }) as unknown as OrderSchemas
  const module = createOrderModule({ ...config, schemas, log: app.log })
  app.decorate('orders', module.service)
  // Subscriptions run while the app is up; they stop before onClose hooks, which may end the storage.
  app.addHook('onReady', async () => { module.start() })
  app.addHook('preClose', async () => { await module.close() })

  // fastify-plugin shares `app.orders` with the host but ignores `prefix`, so the routes get
  // an encapsulated child of their own that carries it.
  await app.register(orderRoutes, {
    prefix: config.prefix,
    module,
    schemas,
    bodyLimit: config.bodyLimit,
    authorize: config.authorize,
    hooks: config.hooks
  })
}

export const orderPlugin = fp(fastifyOrder, { name: 'fastify-order', fastify: '5.x' })
export default orderPlugin

export { codes } from './errors.js'
export type { OrderCustomFields, CustomFieldsPatch } from './custom-fields/types.js'
export { memoryStorage } from './storage/memory/index.js'
export { defaultWorkflow, type Workflow } from './workflow.js'
export {
  buildOrderSchemas, schemas, OrderSchema, OrderErrorSchema, OrderItemSchema, CreateOrderBodySchema,
  ListOrdersBodySchema, OrderPageSchema, UpdateOrderStatusBodySchema
} from './schemas.js'
export type {
  Order, NewOrder, OrderItem, StatusChange, CreateOrderInput, ListOrdersQuery, ListOrdersFilter, OrderPage,
  UpdateOrderStatusInput, OrderErrorBody, OrderSchemas, SchemaLimits, ListEventsQuery
} from './schemas.js'
export type { OrderPluginOptions } from './options.js'
export type { Authorize, OrderHooks, OrderOperation } from './routes.js'
export type { OrderService, OrderCalls, OrderCallOptions, CreateOrderOptions, TransactionClient } from './app-orders.js'
export type { OrderScope } from './scope.js'
export type { OrderEvents, StatusChangedEvent } from './listeners.js'
export type { OrderEvent, OrderCreatedEvent, OrderStatusChangedEvent, EventPage } from './events.js'
export type { OrderEventHandler, SubscribeOptions, SubscriptionStatus } from './subscriptions.js'
export type {
  OrderStorage, OrderStore, EventFeedStore, SubscriptionStore, TransactionOrderStore, CreateResult, IdempotencyClaim,
  StorageListQuery, StorageEventQuery, LeaseRequest, Lease, NewOrderCreatedEvent
} from './storage/types.js'
export type { OrderPosition } from './position.js'
