// Subscriptions: their options checked, a runner per name, and what every instance sees of them (status, dead letters, redelivery).
import { codes } from '../errors.js'
import type { RetryPolicy } from './deliveries.js'
import { MAX_INT32, subscription as limits } from '../limits.js'
import { optionChecker } from '../option-checks.js'
import type { StoredDeadLetter } from '../storage/order-storage.js'
import { unavailableOnFailure } from '../storage/unavailable.js'
import { Runner, type OrderEventContext, type OrderEventHandler, type RunnerConfig, type RunnerOptions, type SubscriptionStatus } from './runner.js'

export type { OrderEventContext, OrderEventHandler, RetryPolicy, SubscriptionStatus }
export type { SubscriptionLag } from './runner.js'

export interface SubscribeOptions {
  /** Where a new subscription starts: `now` (default), after every event stored so far; `start`, at the oldest retained event. Ignored once it has a checkpoint. */
  from?: 'now' | 'start'
  /** How often to look for events written by other instances, and for a lapsed lease, in ms. Default 1000. */
  pollInterval?: number
  /** How long a lease lasts unless renewed, in ms; an instance that dies is replaced after it. Default 30 000, at least twice `pollInterval`. */
  leaseTtl?: number
  /** The longest wait between two attempts at a failing event under `retry: 'forever'`, in ms. Default 60 000. */
  maxBackoff?: number
  /** Events handled at once, 1 to 256; one order's are never handled at once and always in feed order. Default 1. */
  concurrency?: number
  /**
   * `forever` (default): retry a failing event with capped exponential backoff until it succeeds; its
   * order's later events wait. `{ schedule }`: after the k-th failed attempt wait `schedule[k-1]` ms
   * and try again (at most 20 delays, each at most 2^31-1 ms); after a failure with no delay left, the
   * event is set aside as a dead letter and its order's later events go on.
   */
  retry?: RetryPolicy
  /**
   * Milliseconds a handler call may stay pending, 1 to 2^31-1 (default 30 000). Past it the call is a
   * failed attempt ("timed out after N ms", retried or set aside by `retry`), its slot is freed, and
   * the signal the handler got (`handler(event, { signal })`) aborts. `app.close()` waits at most this
   * long for the calls in flight.
   */
  timeout?: number
}

/** An event set aside after its last attempt failed: `app.orders.deadLetters`. */
export type DeadLetter = StoredDeadLetter

export interface DeadLetterPage {
  /** In feed order. */
  items: DeadLetter[]
}

export interface SubscriptionsConfig extends RunnerConfig {
  /** The plugin's eventRetention: no lease may outlast it. */
  eventRetention: number
}

export interface Subscriptions {
  subscribe: (name: string, handler: OrderEventHandler, options?: SubscribeOptions) => void
  subscriptions: () => SubscriptionStatus[]
  /** A page of the dead letters of `name`; `after` already checked to be an event id. */
  deadLetters: (name: unknown, query: { after?: string, limit: number }) => Promise<DeadLetterPage>
  /** Puts dead letters of `name` back (those of `eventIds`, or all); returns how many. */
  redeliver: (name: unknown, eventIds: readonly string[] | undefined) => Promise<{ count: number }>
  /** This instance stored an event: look for it now rather than at the next poll. */
  wake: () => void
  /** Starts the subscriptions made so far and every later one at once (the app is ready). */
  start: () => void
  /** Stops every subscription after its handler calls in flight, records them and gives up the lease. */
  close: () => Promise<void>
}

const NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${limits.nameLength}}$`)
const OPTIONS = ['from', 'pollInterval', 'leaseTtl', 'maxBackoff', 'concurrency', 'retry', 'timeout']

const check = optionChecker('subscribe: ', codes.ORDER_INVALID_SUBSCRIPTION)
// Every duration is a timer's: Node.js fires a longer one at once.
const duration = (fallback: number) => ({ fallback, max: limits.maxDuration, unit: ' ms' })

function checkName (name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw check.invalid(`a subscription name must be 1 to ${limits.nameLength} letters, digits, "_", "." or "-", got ${JSON.stringify(name)}`)
  }
}

/** What a bad retry option is, for its message. */
function kindOf (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object' && value !== null) return `an object with ${Object.keys(value).join(', ') || 'no keys'}`
  return typeof value === 'number' || typeof value === 'boolean' || value === null ? String(value) : `a ${typeof value}`
}

function checkRetry (retry: unknown): RetryPolicy {
  if (retry === undefined || retry === 'forever') return 'forever'
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry) || Object.keys(retry).join() !== 'schedule') {
    throw check.invalid(`retry must be "forever" or { schedule: [ms, …] } with at most ${limits.maxSchedule} delays, got ${kindOf(retry)}`)
  }
  const schedule = check.integers({ 'retry.schedule': (retry as { schedule: unknown }).schedule }, 'retry.schedule',
    { min: 0, max: MAX_INT32, maxLength: limits.maxSchedule, unit: ' ms' })
  return Object.freeze({ schedule: Object.freeze(schedule) })
}

function checkSubscribe (name: unknown, handler: unknown, options: unknown, eventRetention: number): RunnerOptions {
  checkName(name)
  if (typeof handler !== 'function') throw check.invalid(`the handler of subscription "${name}" must be a function (event, { signal }) => ...`)
  const record = check.known(options, OPTIONS, '{ from: "start" }')
  const from = check.oneOf(record, 'from', ['now', 'start'] as const, 'now')
  const pollInterval = check.integer(record, 'pollInterval', duration(limits.defaultPollInterval))
  const leaseTtl = check.integer(record, 'leaseTtl', duration(limits.defaultLeaseTtl))
  if (leaseTtl < 2 * pollInterval) {
    throw check.invalid(`leaseTtl (${leaseTtl}) must be at least twice pollInterval (${pollInterval}), so the holder renews its lease in time`)
  }
  // Retention keeps what a subscription holding its lease within eventRetention has not handled.
  if (leaseTtl > eventRetention) {
    throw check.invalid(`leaseTtl (${leaseTtl}) must be at most the plugin's eventRetention (${eventRetention}), so retention never purges what a live subscription still needs`)
  }
  return {
    from,
    pollInterval,
    leaseTtl,
    maxBackoff: check.integer(record, 'maxBackoff', duration(limits.defaultMaxBackoff)),
    concurrency: check.integer(record, 'concurrency', { fallback: limits.defaultConcurrency, max: limits.maxConcurrency }),
    retry: checkRetry(record.retry),
    timeout: check.integer(record, 'timeout', duration(limits.defaultTimeout))
  }
}

export function createSubscriptions (config: SubscriptionsConfig): Subscriptions {
  // What app.orders calls read: a storage failure is ORDER_STORAGE_UNAVAILABLE there, as for every call.
  const storage = unavailableOnFailure(config.storage, ['inspectSubscription', 'listDeadLetters', 'redeliver'])
  const runners = new Map<string, Runner>()
  let started = false
  let closed = false

  /** Throws ORDER_INVALID_SUBSCRIPTION unless this instance subscribed `name` or the storage knows it. */
  async function checkKnown (name: unknown): Promise<string> {
    checkName(name)
    if (!runners.has(name) && await storage.inspectSubscription(name, 0) === undefined) {
      throw check.invalid(`no subscription is named "${name}": this app has not subscribed it and the storage holds no progress or dead letter of it`)
    }
    return name
  }

  return {
    subscribe (name, handler, options = {}) {
      if (closed) throw check.invalid(`cannot subscribe "${String(name)}": the app is closing`)
      const checked = checkSubscribe(name, handler, options, config.eventRetention)
      if (runners.has(name)) throw check.invalid(`this app already has a subscription named "${name}"`)
      const runner = new Runner(name, handler, checked, config)
      runners.set(name, runner)
      if (started) runner.start()
    },
    subscriptions () {
      return [...runners.values()].map(runner => runner.status())
    },
    async deadLetters (name, query) {
      const known = await checkKnown(name)
      const items = await storage.listDeadLetters(known, query)
      if (items === undefined) throw new codes.ORDER_EVENT_NOT_FOUND(query.after)
      return { items: items.map(({ event, attempts, error, at }) => Object.freeze({ event: config.readonly(event), attempts, error, at })) }
    },
    async redeliver (name, eventIds) {
      const known = await checkKnown(name)
      const count = await storage.redeliver(known, eventIds)
      runners.get(known)?.inspectSoon()
      return { count }
    },
    wake () {
      // Every stored change calls it: no iterator made when there is no subscription.
      if (runners.size > 0) for (const runner of runners.values()) runner.wake()
    },
    start () {
      started = true
      for (const runner of runners.values()) runner.start()
    },
    async close () {
      closed = true
      await Promise.all([...runners.values()].map(runner => runner.stop()))
    }
  }
}
