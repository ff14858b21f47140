// The order module wired: validators, the rules, listeners, the feed, retention, subscriptions and their lifecycle.
import type { FastifyBaseLogger } from 'fastify'
import { appOrders, type OrderOperations, type OrderService } from './app-orders.js'
import { withValueLimits } from './custom-fields/limits.js'
import { codes } from './errors.js'
import { customFieldRules } from './custom-fields/rules.js'
import type { CustomFieldSchemas } from './custom-fields/types.js'
import { listEvents } from './feed.js'
import { freezer } from './freeze.js'
import { createListeners } from './listeners.js'
import { orderRules, type OrderRules } from './orders.js'
import { createRetention } from './retention.js'
import type { OrderSchemas } from './schemas.js'
import { storageMethods, type OrderStorage, type TransactionOrderStore } from './storage/types.js'
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
  /** The operations on a client inside the host's transaction; ORDER_INVALID_OPTIONS where the storage cannot join one. */
  transactional: (client: unknown) => OrderOperations
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
  const listeners = createListeners(log)
  const retention = createRetention({ storage, eventRetention, log })
  const subscriptions = createSubscriptions({ storage, log, readonly: freeze.event, eventRetention })

  /** After each stored change: its event is in the feed. */
  function written (): void {
    retention.written()
    subscriptions.wake()
  }

  // Listeners of a change made in the host's transaction wait for its commit; closing stops the wait
  // (without waiting for a look under way, which on PGlite waits for that transaction to end).
  const closing = new AbortController()
  function afterCommit (store: TransactionOrderStore, eventId: string, emit: () => Promise<void>): void {
    store.settled(eventId, closing.signal).then(async committed => {
      if (!committed || closing.signal.aborted) return
      written()
      await emit()
    }, err => {
      if (!closing.signal.aborted) log.error({ err }, 'fastify-order: could not learn whether a transaction committed; its listeners did not run')
    })
  }

  /**
   * The operations over `rules`. `after` runs what follows a stored change (the feed's upkeep, then
   * the listeners): at once, or once the host's transaction commits.
   */
  function operationsOf (rules: OrderRules, after: (eventId: string, emit: () => Promise<void>) => Promise<void> | void): OrderOperations {
    return {
      async createOrder (input, scope, idempotencyKey) {
        const result = await rules.create(input, scope, idempotencyKey)
        if (result.eventId !== undefined) {
          await after(result.eventId, async () => { if (listeners.has('created')) await listeners.emit('created', freeze.order(result.order)) })
        }
        return result
      },
      listOrders: rules.list,
      async updateOrderStatus (input, scope) {
        const { order, from, eventId } = await rules.move(input, scope)
        if (eventId !== undefined) {
          await after(eventId, async () => {
            if (listeners.has('statusChanged')) await listeners.emit('statusChanged', Object.freeze({ order: freeze.order(order), from: from!, to: order.status }))
          })
        }
        return order
      }
    }
  }

  // Outside a transaction the change is committed: the listeners run before the caller gets the order.
  const operations = operationsOf(orderRules({ storage: guarded, workflow, fields, maxPageSize, idempotencyTtl }), async (_eventId, emit) => {
    written()
    await emit()
  })

  function transactional (client: unknown): OrderOperations {
    if (storage.joinTransaction === undefined) {
      throw new codes.ORDER_INVALID_OPTIONS('app.orders.withTransaction needs a storage that can join the host\'s transaction: postgresStorage can, memoryStorage cannot; with this storage, call app.orders.create, list and updateStatus directly')
    }
    const store = storage.joinTransaction(client)
    const rules = orderRules({ storage: unavailableOnFailure(store, ['create', 'get', 'list', 'replace']), workflow, fields, maxPageSize, idempotencyTtl })
    return operationsOf(rules, (eventId, emit) => afterCommit(store, eventId, emit))
  }

  const service = appOrders({
    operations,
    schemas,
    validatorOf,
    fields,
    freeze,
    listeners,
    listEvents: query => listEvents(guarded, query, freeze.event),
    subscriptions,
    transactional
  })

  return {
    ...operations,
    service,
    transactional,
    validatorOf,
    start: subscriptions.start,
    async close () {
      closing.abort()
      await subscriptions.close()
      await retention.close()
    }
  }
}
