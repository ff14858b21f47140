// The subscription runner: lease, read, handle, checkpoint, back off, and stop at close.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { codes } from './errors.js'
import { subscription as limits } from './limits.js'
import { optionChecker } from './option-checks.js'
import type { OrderEvent } from './events.js'
import type { SubscriptionsCapability } from './storage/order-storage.js'

/** Handles one event; resolving checkpoints it, throwing or rejecting retries it after a backoff. */
export type OrderEventHandler = (event: OrderEvent) => unknown

export interface SubscribeOptions {
  /** Where a new subscription starts: `now` (default), after every event stored so far; `start`, at the oldest retained event. Ignored once it has a checkpoint. */
  from?: 'now' | 'start'
  /** How often to look for events written by other instances, and for a lapsed lease, in ms. Default 1000. */
  pollInterval?: number
  /** How long a lease lasts unless renewed, in ms; an instance that dies is replaced after it. Default 30 000, at least twice `pollInterval`. */
  leaseTtl?: number
  /** The longest wait between two attempts at a failing event, in ms. Default 60 000. */
  maxBackoff?: number
}

/** A subscription of this instance, for health checks. */
export interface SubscriptionStatus {
  name: string
  /** The last event handled and checkpointed, or null. */
  lastEventId: string | null
  /** Whether this instance holds the lease, so runs the handler. */
  active: boolean
  /** Present while an event's handler keeps failing. */
  failing?: { eventId: string, attempts: number, error: string }
}

export interface SubscriptionsConfig {
  storage: SubscriptionsCapability
  log: FastifyBaseLogger
  /** Freezes an event before host code gets it. */
  readonly: (event: OrderEvent) => OrderEvent
  /** The plugin's eventRetention: no lease may outlast it. */
  eventRetention: number
}

export interface Subscriptions {
  subscribe: (name: string, handler: OrderEventHandler, options?: SubscribeOptions) => void
  subscriptions: () => SubscriptionStatus[]
  /** This instance stored an event: look for it now rather than at the next poll. */
  wake: () => void
  /** Starts the subscriptions made so far and every later one at once (the app is ready). */
  start: () => void
  /** Stops every subscription after its handler in flight, checkpoints it and gives up the lease. */
  close: () => Promise<void>
}

const NAME = new RegExp(`^[A-Za-z0-9_.-]{1,${limits.nameLength}}$`)
const OPTIONS = ['from', 'pollInterval', 'leaseTtl', 'maxBackoff']
const BATCH = 100
const FIRST_BACKOFF = 100
// After a local write, an empty read is retried at 1, 2, 4 ... ms, up to the poll interval: on
// PostgreSQL the event is listed only once older transactions elsewhere have ended.
const FIRST_CHASE = 1

const check = optionChecker('subscribe: ', codes.ORDER_INVALID_SUBSCRIPTION)
// Every duration is a timer's: Node.js fires a longer one at once.
const duration = (fallback: number) => ({ fallback, max: limits.maxDuration, unit: ' ms' })

function checkSubscribe (name: unknown, handler: unknown, options: unknown, eventRetention: number): Required<SubscribeOptions> {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw check.invalid(`a subscription name must be 1 to ${limits.nameLength} letters, digits, "_", "." or "-", got ${JSON.stringify(name)}`)
  }
  if (typeof handler !== 'function') throw check.invalid(`the handler of subscription "${name}" must be a function (event) => ...`)
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
  return { from, pollInterval, leaseTtl, maxBackoff: check.integer(record, 'maxBackoff', duration(limits.defaultMaxBackoff)) }
}

/**
 * A readable description of anything a handler may throw: an Error's message, a string, or the type
 * and JSON of another value (an object without a prototype has no toString to call).
 */
export function describeThrown (thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message
  if (typeof thrown === 'string') return thrown
  let json: string | undefined
  try {
    json = JSON.stringify(thrown)
  } catch {}
  const type = thrown === null || thrown === undefined ? String(thrown) : typeof thrown === 'object' ? 'an object' : `a ${typeof thrown}`
  return json === undefined || json === 'null' ? `${type} was thrown` : `${type} was thrown: ${json.slice(0, 200)}`
}

/** A wait that `interrupt` ends early; its timer never keeps the process alive. */
class Pause {
  private timer: NodeJS.Timeout | undefined
  private resolve: (() => void) | undefined

  wait (ms: number): Promise<void> {
    return new Promise(resolve => {
      this.resolve = resolve
      this.timer = setTimeout(resolve, ms).unref()
    })
  }

  interrupt (): void {
    clearTimeout(this.timer)
    this.resolve?.()
  }
}

class Runner {
  readonly status: SubscriptionStatus
  private readonly holder = randomUUID()
  private stopped = false
  private running: Promise<void> | undefined
  // One pause for waiting on events (ended by a local write or close), one for backoff (close only).
  private readonly poll = new Pause()
  private readonly backoff = new Pause()
  private chase = 0
  private renewal: NodeJS.Timeout | undefined
  private lost = false

  constructor (
    readonly name: string,
    private readonly handler: OrderEventHandler,
    private readonly options: Required<SubscribeOptions>,
    private readonly config: SubscriptionsConfig
  ) {
    this.status = { name, lastEventId: null, active: false }
  }

  start (): void {
    this.running ??= this.run()
  }

  /** Only the lease holder reads; another instance's runner waits for its poll as before. */
  wake (): void {
    if (!this.status.active) return
    this.chase = FIRST_CHASE
    this.poll.interrupt()
  }

  async stop (): Promise<void> {
    this.stopped = true
    this.poll.interrupt()
    this.backoff.interrupt()
    await this.running
  }

  private async run (): Promise<void> {
    const { storage, log } = this.config
    const { name, holder } = this
    while (!this.stopped) {
      let delay = this.options.pollInterval
      try {
        const lease = await storage.lease({ name, holder, ttl: this.options.leaseTtl, from: this.options.from })
        this.status.active = lease.held
        this.status.lastEventId = lease.lastEventId
        if (lease.held) {
          const events = await storage.readSubscription(name, BATCH)
          if (events.length > 0) {
            await this.deliver(events)
            delay = 0
          } else if (this.chase > 0) {
            delay = this.chase
            this.chase = this.chase * 2 < this.options.pollInterval ? this.chase * 2 : 0
          }
        }
      } catch (err) {
        log.warn({ err, subscription: name }, `fastify-order: subscription "${name}" could not reach the storage; retrying`)
      }
      if (delay > 0 && !this.stopped) await this.poll.wait(delay)
    }
    await this.release()
  }

  /** Handles a batch in order, checkpointing each event; stops early if the lease is lost or at close. */
  private async deliver (events: readonly OrderEvent[]): Promise<void> {
    const { storage } = this.config
    this.lost = false
    // Renewed while working, so a long batch or a failing handler keeps the lease.
    this.renewal = setInterval(() => { this.renew() }, Math.floor(this.options.leaseTtl / 3)).unref()
    try {
      for (const event of events) {
        if (this.stopped || this.lost || !await this.handle(event)) return
        if (!await storage.checkpoint(this.name, this.holder, this.status.lastEventId, event.id)) {
          this.status.active = false
          return
        }
        this.status.lastEventId = event.id
      }
    } finally {
      clearInterval(this.renewal)
    }
  }

  /** Runs the handler until it succeeds; false if the subscription stopped or lost its lease first. */
  private async handle (event: OrderEvent): Promise<boolean> {
    const { log, readonly } = this.config
    for (let attempts = 1; !this.stopped && !this.lost; attempts++) {
      try {
        await this.handler(readonly(event))
        delete this.status.failing
        return true
      } catch (err) {
        const error = describeThrown(err)
        this.status.failing = { eventId: event.id, attempts, error }
        // Logged as an Error, whatever was thrown: a value without a prototype cannot be serialized as one.
        log.error({ err: err instanceof Error ? err : new Error(error), subscription: this.name, eventId: event.id, attempts },
          `fastify-order: subscription "${this.name}" failed to handle event ${event.id}; retrying`)
      }
      await this.backoff.wait(Math.min(FIRST_BACKOFF * 2 ** Math.min(attempts - 1, 30), this.options.maxBackoff))
    }
    return false
  }

  private renew (): void {
    const { storage, log } = this.config
    storage.lease({ name: this.name, holder: this.holder, ttl: this.options.leaseTtl, from: this.options.from }).then(lease => {
      if (!lease.held) {
        this.lost = true
        this.status.active = false
        this.backoff.interrupt()
      }
    }, (err: unknown) => {
      log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not renew its lease; retrying`)
    })
  }

  private async release (): Promise<void> {
    this.status.active = false
    try {
      await this.config.storage.release(this.name, this.holder)
    } catch (err) {
      // The lease lapses after its TTL all the same.
      this.config.log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not release its lease`)
    }
  }
}

export function createSubscriptions (config: SubscriptionsConfig): Subscriptions {
  const runners = new Map<string, Runner>()
  let started = false
  let closed = false

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
      return [...runners.values()].map(({ status }) => ({
        ...status,
        ...(status.failing === undefined ? {} : { failing: { ...status.failing } })
      }))
    },
    wake () {
      for (const runner of runners.values()) runner.wake()
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
