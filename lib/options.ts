// The plugin options, their defaults and their validation at register time.
import { checkCustomFields } from './custom-fields/schemas.js'
import type { CustomFieldSchemas, CustomFieldsSchemaOf } from './custom-fields/types.js'
import { codes } from './errors.js'
import type { Authorize, OrderHooks } from './routes.js'
import { memoryStorage } from './storage/memory/index.js'
import { storageMethods, type OrderStorage } from './storage/types.js'
import { compileWorkflow, defaultWorkflow, type CompiledWorkflow, type Workflow } from './workflow.js'

export interface OrderPluginOptions {
  /** Where orders live. Default: `memoryStorage()`, in process and lost on exit. */
  storage?: OrderStorage
  /** Path prefix before `/order`, e.g. `/api`. */
  prefix?: string
  /** The status state machine. Default: `defaultWorkflow`. */
  workflow?: Workflow
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
}

const DAY = 24 * 60 * 60 * 1000
// Options Fastify itself reads from the register call may sit beside ours.
const FASTIFY_OPTIONS = ['logLevel', 'logSerializers']
const STORAGE_METHODS = Object.values(storageMethods).flat()

function invalid (message: string) {
  return new codes.ORDER_INVALID_OPTIONS(message)
}

/** The longest a duration option may be: 100 years, so every time computed from it stays a four-digit year. */
const MAX_DURATION = 100 * 365 * DAY
/** The largest page and order that stay one bounded statement; and a body limit a 32-bit length holds. */
const MAX_COUNT = 10_000
const MAX_BODY = 2 ** 31 - 1

function positiveInteger (options: Record<string, unknown>, name: string, fallback: number, max: number, unit: string): number {
  const value = options[name] ?? fallback
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw invalid(`${name} must be a positive integer, got ${JSON.stringify(value)}`)
  }
  if ((value as number) > max) throw invalid(`${name} must be at most ${max}${unit}, got ${value as number}`)
  return value as number
}

function checkHooks (hooks: unknown): OrderHooks | undefined {
  if (hooks === undefined) return undefined
  if (typeof hooks !== 'object' || hooks === null) throw invalid('hooks must be an object like { onRequest, preHandler }')
  for (const [name, value] of Object.entries(hooks)) {
    if (name !== 'onRequest' && name !== 'preHandler') {
      throw invalid(`hooks.${name} is not supported; use hooks.onRequest or hooks.preHandler`)
    }
    const handlers: unknown[] = Array.isArray(value) ? value : [value]
    if (!handlers.every(handler => typeof handler === 'function')) {
      throw invalid(`hooks.${name} must be a hook function or an array of them`)
    }
  }
  return hooks as OrderHooks
}

/** Checks the register options and fills the defaults; every error says what to change. */
export function checkOptions (options: OrderPluginOptions = {}): OrderPluginConfig {
  const known = new Set<string>(['storage', 'prefix', 'workflow', 'maxPageSize', 'maxItems', 'idempotencyTtl', 'bodyLimit', 'authorize', 'hooks', 'eventRetention', 'customFields'])
  for (const name of Object.keys(options)) {
    if (!known.has(name) && !FASTIFY_OPTIONS.includes(name)) {
      throw invalid(`unknown option "${name}"; the options are ${[...known].join(', ')}`)
    }
  }
  const record = options as Record<string, unknown>

  const storage = options.storage ?? memoryStorage()
  for (const method of STORAGE_METHODS) {
    if (typeof storage?.[method] !== 'function') {
      throw invalid(`storage must implement OrderStorage: storage.${method} is not a function`)
    }
  }
  if (storage.init !== undefined && typeof storage.init !== 'function') throw invalid('storage.init must be a function when given')

  const { prefix, authorize } = options
  if (prefix !== undefined && (typeof prefix !== 'string' || !prefix.startsWith('/'))) {
    throw invalid(`prefix must be a path starting with "/", like "/api", got ${JSON.stringify(prefix)}`)
  }
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw invalid('authorize must be a function (request, operation) => scope | boolean')
  }

  return {
    storage,
    prefix,
    workflow: compileWorkflow(options.workflow ?? defaultWorkflow),
    maxPageSize: positiveInteger(record, 'maxPageSize', 100, MAX_COUNT, ''),
    maxItems: positiveInteger(record, 'maxItems', 100, MAX_COUNT, ''),
    idempotencyTtl: positiveInteger(record, 'idempotencyTtl', DAY, MAX_DURATION, ' ms (100 years)'),
    bodyLimit: positiveInteger(record, 'bodyLimit', 1024 * 1024, MAX_BODY, ' bytes'),
    authorize,
    hooks: checkHooks(options.hooks),
    eventRetention: positiveInteger(record, 'eventRetention', 30 * DAY, MAX_DURATION, ' ms (100 years)'),
    customFields: checkCustomFields(options.customFields)
  }
}
