// The plugin options, their defaults and their validation at register time.
import { checkCustomFields } from './custom-fields/forms.js'
import type { CustomFieldSchemas, CustomFieldsSchemaOf } from './custom-fields/types.js'
import { codes } from './errors.js'
import { plugin as limits } from './limits.js'
import { optionChecker } from './option-checks.js'
import type { Authorize, OrderHooks } from './http/routes.js'
import { memoryStorage } from './storage/memory/memory-storage.js'
import { hasCapability, storageMethods, storageProblem, type OrderStorage } from './storage/order-storage.js'
import { checkChanges, type ChangesConfig, type ChangesOptions } from './orders/change-options.js'
import { checkDesk, type DeskConfig, type DeskOptions } from './desk/desk-options.js'
import { checkStream, type StreamConfig, type StreamOptions } from './feed/stream-options.js'
import { storageMistake } from './storage/storage-mistakes.js'
import { compileWorkflow, defaultWorkflow, type CompiledWorkflow, type Workflow } from './orders/workflow.js'
import type { OrderStatus } from './orders/statuses.js'

export interface OrderPluginOptions {
  /** Where orders live. Default: `memoryStorage()`, in process and lost on exit. */
  storage?: OrderStorage
  /** Path prefix before `/order`, e.g. `/api`. */
  prefix?: string
  /** The status state machine. Default: `defaultWorkflow`. With statuses declared in `OrderStatuses`, it has those. */
  workflow?: Workflow<OrderStatus>
  /** Largest `limit` of getOrderList. Default: 100. */
  maxPageSize?: number
  /** Most items in one order. Default: 100. */
  maxItems?: number
  /** How long idempotency keys are kept, in milliseconds. Default: 24 hours. */
  idempotencyTtl?: number
  /** Largest request body of the three routes, in bytes. Default: 1 MiB. */
  bodyLimit?: number
  /** Grants or scopes each operation; see `Authorize`. Default: everything allowed. */
  authorize?: Authorize
  /** `onRequest` / `preHandler` hooks for the three routes. */
  hooks?: OrderHooks
  /** How long events stay in the feed at least, in milliseconds. Default: 30 days. */
  eventRetention?: number
  /**
   * Typed extra fields: TypeBox object schemas of the order's `customFields` and each item's.
   * Declare their types in `OrderCustomFields` to have them in `Order` and the inputs.
   */
  customFields?: { order?: CustomFieldsSchemaOf<'order'>, item?: CustomFieldsSchemaOf<'item'> }
  /**
   * Milliseconds an open transaction may hold the PostgreSQL event feed back before a warning is
   * logged (naming its backend pid and start), again each time its age doubles. 0 turns it off.
   * Default: 60 000.
   */
  feedStallWarning?: number
  /**
   * Changes after placement: `app.orders.change`, the order's ledger (`paid`, `balance`, `payments`,
   * `changes`) and `filter.balance`; `{ route: true }` also serves `POST /order/changeOrder`. Default: off.
   */
  changes?: boolean | ChangesOptions
  /**
   * The staff page at `{prefix}/order/desk` (section 18 of the contract); with changes on it also serves
   * `POST /order/changeOrder`. Default: off.
   */
  desk?: boolean | DeskOptions
  /**
   * The event stream: `GET /order/events` as Server-Sent Events of the feed, in the caller's scope
   * (authorize operation 'streamEvents'). `true` or `{ maxClients, pollInterval, heartbeatInterval }`. Default: off.
   */
  stream?: boolean | StreamOptions
}

export interface OrderPluginConfig {
  storage: OrderStorage
  prefix: string | undefined
  workflow: CompiledWorkflow
  maxPageSize: number
  maxItems: number
  idempotencyTtl: number
  bodyLimit: number
  authorize: Authorize | undefined
  hooks: OrderHooks | undefined
  eventRetention: number
  customFields: CustomFieldSchemas | undefined
  feedStallWarning: number
  /** Undefined while changes are off. */
  changes: ChangesConfig | undefined
  /** Undefined while the desk is off. */
  desk: DeskConfig | undefined
  /** Undefined while the stream is off; an option that needs it (the desk) sets it with checkStream(true, check). */
  stream: StreamConfig | undefined
}

// Options Fastify itself reads from the register call may sit beside ours.
const FASTIFY_OPTIONS = ['logLevel', 'logSerializers']
const OPTIONS = ['storage', 'prefix', 'workflow', 'maxPageSize', 'maxItems', 'idempotencyTtl', 'bodyLimit', 'authorize', 'hooks', 'eventRetention', 'customFields', 'feedStallWarning', 'changes', 'stream', 'desk']
const check = optionChecker('', codes.ORDER_INVALID_OPTIONS)
const duration = (fallback: number) => ({ fallback, max: limits.maxDuration, unit: ' ms (100 years)' })

function checkHooks (hooks: unknown, option = 'hooks'): OrderHooks | undefined {
  if (hooks === undefined) return undefined
  if (typeof hooks !== 'object' || hooks === null) throw check.invalid(`${option} must be an object like { onRequest, preHandler }`)
  for (const [name, value] of Object.entries(hooks)) {
    if (name !== 'onRequest' && name !== 'preHandler') {
      throw check.invalid(`${option}.${name} is not supported; use ${option}.onRequest or ${option}.preHandler`)
    }
    const handlers: unknown[] = Array.isArray(value) ? value : [value]
    if (!handlers.every(handler => typeof handler === 'function')) {
      throw check.invalid(`${option}.${name} must be a hook function or an array of them`)
    }
  }
  return hooks as OrderHooks
}

/** Checks the register options and fills the defaults; every error says what to change. */
export function checkOptions (options: OrderPluginOptions = {}): OrderPluginConfig {
  const record = check.known(options, OPTIONS, '{ storage }', FASTIFY_OPTIONS)
  const storage = options.storage ?? memoryStorage()
  const problem = storageMistake(storage) ?? storageProblem(storage)
  if (problem !== undefined) throw check.invalid(problem)
  const { prefix } = options
  if (prefix !== undefined && (typeof prefix !== 'string' || !prefix.startsWith('/'))) {
    throw check.invalid(`prefix must be a path starting with "/", like "/api", got ${JSON.stringify(prefix)}`)
  }
  const workflow = compileWorkflow(options.workflow ?? defaultWorkflow)
  const maxItems = check.integer(record, 'maxItems', { fallback: limits.defaultMaxItems, max: limits.maxCount })
  const changes = checkChanges(options.changes, workflow, maxItems, check)
  if (changes !== undefined && !hasCapability(storage, 'changes')) {
    throw check.invalid(`changes need a storage with ${storageMethods.changes.join(', ')}; this storage has none`)
  }
  const desk = checkDesk(options.desk, check, checkHooks)
  // The desk lives on the event stream: it turns the stream on.
  const stream = checkStream(desk !== undefined && (options.stream === undefined || options.stream === false) ? true : options.stream, check)
  if (stream !== undefined && !hasCapability(storage, 'feed')) {
    throw check.invalid(`${desk === undefined ? 'stream needs' : 'the desk needs the event stream, which needs'} a storage with the event feed (${storageMethods.feed.join(', ')}); this storage has none: turn ${desk === undefined ? 'stream' : 'the desk'} off or use a storage with the feed`)
  }
  return {
    storage,
    prefix,
    workflow,
    maxPageSize: check.integer(record, 'maxPageSize', { fallback: limits.defaultMaxPageSize, max: limits.maxCount }),
    maxItems,
    idempotencyTtl: check.integer(record, 'idempotencyTtl', duration(limits.defaultIdempotencyTtl)),
    bodyLimit: check.integer(record, 'bodyLimit', { fallback: limits.defaultBodyLimit, max: limits.maxBodyLimit, unit: ' bytes' }),
    authorize: check.func<Authorize>(record, 'authorize', '(request, operation) => scope | boolean'),
    hooks: checkHooks(options.hooks),
    eventRetention: check.integer(record, 'eventRetention', duration(limits.defaultEventRetention)),
    customFields: checkCustomFields(options.customFields),
    feedStallWarning: check.integer(record, 'feedStallWarning', { ...duration(limits.defaultFeedStallWarning), min: 0 }),
    // The desk acts through the plugin's own routes, changeOrder among them when changes are on.
    changes: desk !== undefined && changes !== undefined ? { ...changes, route: true } : changes,
    desk,
    stream
  }
}
