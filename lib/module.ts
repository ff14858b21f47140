// The order module wired: validators, the rules, listeners, the feed, retention, subscriptions and their lifecycle.
import type { FastifyBaseLogger } from 'fastify'
import { appOrders, type OrderOperations, type OrderService } from './app-orders.js'
import { withValueLimits } from './custom-fields/limits.js'
import { customFieldRules } from './custom-fields/rules.js'
import type { CustomFieldSchemas } from './custom-fields/types.js'
import { listEvents } from './feed.js'
import { freezer } from './freeze.js'
import { createListeners } from './listeners.js'
import { orderRules } from './orders.js'
import { createRetention } from './retention.js'
import type { OrderSchemas } from './schemas.js'
import { storageMethods, type OrderStorage } from './storage/types.js'
import { unavailableOnFailure } from './storage/unavailable.js'
import { createSubscriptions } from './subscriptions.js'
import { createAjv, type Validate } from './validation.js'
import type { CompiledWorkflow } from './workflow.js'

export interface OrderModuleConfig {
  storage: OrderStorage
  workflow: CompiledWorkflow
  schemas: OrderSchemas
  maxPageSize: number
  idempotencyTtl: number
  eventRetention: number
  log: FastifyBaseLogger
  customFields?: CustomFieldSchemas | undefined
}

export interface OrderModule extends OrderOperations {
  /** `app.orders`. */
  service: OrderService
  /** The strict validator of a schema, compiled once and shared by the routes and `app.orders`. */
  validatorOf: (schema: object) => Validate
  /** Starts the subscriptions: the app is ready. */
  start: () => void
  /** Stops the subscriptions after their handlers in flight, and waits for a purge under way. */
  close: () => Promise<void>
}

export function createOrderModule (config: OrderModuleConfig): OrderModule {
  const { storage, workflow, schemas, maxPageSize, idempotencyTtl, eventRetention, log } = config

  const ajv = createAjv()
  const validators = new Map<object, Validate>()
  // With custom fields, the bodies that carry them are checked for values no storage could keep first.
  const limited = new Set<object>(config.customFields === undefined ? [] : [schemas.CreateOrderBody, schemas.UpdateOrderStatusBody])
  const validatorOf = (schema: object): Validate => {
    let validate = validators.get(schema)
    if (validate === undefined) {
      validate = ajv.compile(schema)
      validators.set(schema, validate = limited.has(schema) ? withValueLimits(validate) : validate)
    }
    return validate
  }

  const fields = customFieldRules(config.customFields, validatorOf)
  const freeze = freezer(fields)
  const guarded = unavailableOnFailure(storage, [...storageMethods.orders, 'listEvents'])
  const rules = orderRules({ storage: guarded, workflow, fields, maxPageSize, idempotencyTtl })
  const listeners = createListeners(log)
  const retention = createRetention({ storage, eventRetention, log })
  const subscriptions = createSubscriptions({ storage, log, readonly: freeze.event, eventRetention })

  /** After each stored change: its event is in the feed. */
  function written (): void {
    retention.written()
    subscriptions.wake()
  }

  const operations: OrderOperations = {
    async createOrder (input, scope, idempotencyKey) {
      const result = await rules.create(input, scope, idempotencyKey)
      if (!result.replayed) {
        written()
        if (listeners.has('created')) await listeners.emit('created', freeze.order(result.order))
      }
      return result
    },
    listOrders: rules.list,
    async updateOrderStatus (input, scope) {
      const { order, from } = await rules.move(input, scope)
      if (from !== undefined) {
        written()
        if (listeners.has('statusChanged')) {
          await listeners.emit('statusChanged', Object.freeze({ order: freeze.order(order), from, to: order.status }))
        }
      }
      return order
    }
  }

  const service = appOrders({
    operations,
    schemas,
    validatorOf,
    fields,
    freeze,
    listeners,
    listEvents: query => listEvents(guarded, query, freeze.event),
    subscriptions
  })

  return {
    ...operations,
    service,
    validatorOf,
    start: subscriptions.start,
    async close () {
      await subscriptions.close()
      await retention.close()
    }
  }
}
