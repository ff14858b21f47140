// The subscription runner: lease, read, hand events to the deliveries, record their progress, look at the lag, back off, close.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { codes } from '../errors.js'
import { describeFailure, loggableFailure } from '../feed/describe-failure.js'
import { Deliveries, type Attempt, type AttemptResult, type Progress, type RetryPolicy } from './deliveries.js'
import type { OrderEvent } from '../feed/events.js'
import { subscription as limits } from '../limits.js'
import type { SubscriptionsCapability } from '../storage/order-storage.js'
import type { Telemetry } from '../telemetry/telemetry.js'

/** What a handler gets beside the event. */
export interface OrderEventContext {
  /** Aborts once the call has been pending for the subscription's `timeout`: pass it to fetch and the like, and stop. */
  signal: AbortSignal
}

/**
 * Handles one event; resolving finishes it, throwing or rejecting retries it (or sets it aside, with a
 * schedule), and so does staying pending past the subscription's `timeout`, which aborts `signal`.
 */
export type OrderEventHandler = (event: OrderEvent, context: OrderEventContext) => unknown

/** A subscription's options once checked, defaults filled in. */
export interface RunnerOptions {
  from: 'now' | 'start'
  pollInterval: number
  leaseTtl: number
  maxBackoff: number
  concurrency: number
  retry: RetryPolicy
  timeout: number
}

/** How far behind a subscription is. */
export interface SubscriptionLag {
  /** Events the feed lists and the subscription has not finished, counted up to 10,000. */
  events: number
  /** The `at` of the oldest of them, or null. */
  oldestAt: string | null
}

/** A subscription of this instance, for health checks. */
export interface SubscriptionStatus {
  name: string
  /** The end of the unbroken run of handled events, as stored, or null. */
  lastEventId: string | null
  /** Whether this instance holds the lease, so runs the handler. */
  active: boolean
  /** The most recent failure of an event still being retried. */
  failing?: { eventId: string, attempts: number, error: string }
  /** Events started and not finished: running, waiting for their next attempt, or not recorded yet. */
  inFlight: number
  /** How many dead letters the storage holds for it. */
  deadLetters: number
  lag: SubscriptionLag
}

export interface RunnerConfig {
  storage: SubscriptionsCapability
  log: FastifyBaseLogger
  /** Freezes an event before host code gets it. */
  readonly: (event: OrderEvent) => OrderEvent
  /** A span per handler call, and the deliveries counter and duration histogram. */
  telemetry: Telemetry
}

const BATCH = 100
/**
 * How many events one holder keeps read and not finished, ahead of the checkpoint, per slot (at least
 * two batches): enough for every slot to find an order of its own. It reads again once half a batch
 * has room.
 */
const WINDOW_PER_SLOT = 8
// After a local write, an empty read is retried at 1, 2, 4 ... ms, up to the poll interval: on
// PostgreSQL the event is listed only once older transactions elsewhere have ended.
const FIRST_CHASE = 1
/** The longest a status's lag and dead-letter count go without a look at the storage (or the poll interval, when shorter). */
const INSPECT_EVERY = 1000

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * A failure's description as every storage keeps it: PostgreSQL text holds no NUL and no lone
 * surrogate (a refused dead letter would be set aside again and again), and one error message, an
 * HTTP body say, need not fill a dead letter.
 */
function storable (description: string): string {
  return description.slice(0, limits.errorLength).replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD')
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

/**
 * Non-enumerable, so that section 8's shape compares as it always did; `toJSON` keeps them in a
 * health check's JSON.
 */
function statusOf (shown: Omit<SubscriptionStatus, 'inFlight' | 'deadLetters' | 'lag'>, counts: Pick<SubscriptionStatus, 'inFlight' | 'deadLetters' | 'lag'>): SubscriptionStatus {
  return Object.defineProperties(shown, {
    inFlight: { value: counts.inFlight },
    deadLetters: { value: counts.deadLetters },
    lag: { value: counts.lag },
    toJSON: { value: () => ({ ...shown, ...counts }) }
  }) as SubscriptionStatus
}

export class Runner {
  private readonly holder = randomUUID()
  private stopped = false
  private running: Promise<void> | undefined
  private readonly poll = new Pause()
  private chase = 0
  private active = false
  private lastEventId: string | null = null
  private session: Deliveries | undefined
  private renewal: NodeJS.Timeout | undefined
  /** The failures of events still being retried, the most recent last. */
  private readonly failures = new Map<string, { eventId: string, attempts: number, error: string }>()
  private lag: SubscriptionLag = { events: 0, oldestAt: null }
  private deadLetters = 0
  private inspectedAt = 0
  private readonly inspectEvery: number
  private waitingForRoom = false
  private readonly window: number

  constructor (
    readonly name: string,
    private readonly handler: OrderEventHandler,
    private readonly options: RunnerOptions,
    private readonly config: RunnerConfig
  ) {
    this.inspectEvery = Math.min(options.pollInterval, INSPECT_EVERY)
    this.window = Math.max(2 * BATCH, WINDOW_PER_SLOT * options.concurrency)
  }

  /** How the subscription is doing: the one place its counts and lag are read from. */
  status (): SubscriptionStatus {
    const failing = [...this.failures.values()].at(-1)
    return statusOf(
      { name: this.name, lastEventId: this.session?.lastEventId ?? this.lastEventId, active: this.active, ...(failing === undefined ? {} : { failing: { ...failing } }) },
      { inFlight: this.session?.inFlight ?? 0, deadLetters: this.deadLetters, lag: { ...this.lag } })
  }

  start (): void {
    this.running ??= this.run()
  }

  /** Only the lease holder reads; another instance's runner waits for its poll as before. */
  wake (): void {
    if (!this.active) return
    this.chase = FIRST_CHASE
    this.poll.interrupt()
  }

  /** Dead letters were put back, or their count changed: look at the storage at the next turn. */
  inspectSoon (): void {
    this.inspectedAt = 0
    this.poll.interrupt()
  }

  async stop (): Promise<void> {
    this.stopped = true
    this.poll.interrupt()
    await this.running
  }

  private async run (): Promise<void> {
    while (!this.stopped) {
      let delay = this.options.pollInterval
      try {
        delay = await this.turn()
      } catch (err) {
        this.config.log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not reach the storage; retrying`)
      }
      if (delay > 0 && !this.stopped) await this.poll.wait(delay)
    }
    await this.endSession()
    await this.release()
  }

  /** One look: take or renew the lease, then read what the deliveries have room for. Returns how long to wait. */
  private async turn (): Promise<number> {
    if (this.session?.lost === true) await this.endSession()
    // While deliveries are under way, the renewal keeps the lease, as it did while section 8's handler ran.
    if (this.session?.idle === false) {
      await this.inspect(true)
      return this.read(this.session)
    }
    const { name, holder, options } = this
    const asked = Date.now()
    const lease = await this.config.storage.lease({ name, holder, ttl: options.leaseTtl, from: options.from })
    this.active = lease.held
    if (!lease.held) {
      await this.endSession()
      this.lastEventId = lease.lastEventId
      await this.inspect(false)
      return options.pollInterval
    }
    const session = this.session ?? this.startSession(lease.lastEventId)
    session.extend(asked + options.leaseTtl)
    await this.inspect(true)
    return this.read(session)
  }

  /** Reads the next events into the deliveries, when they have room. */
  private async read (session: Deliveries): Promise<number> {
    const room = this.window - session.pending
    this.waitingForRoom = room < BATCH / 2
    if (this.waitingForRoom) return this.options.pollInterval
    const events = await this.config.storage.readSubscription(this.name, Math.min(room, BATCH), session.readAfter)
    session.add(events)
    if (events.length > 0) return 0
    if (this.chase === 0) return this.options.pollInterval
    const delay = this.chase
    this.chase = this.chase * 2 < this.options.pollInterval ? this.chase * 2 : 0
    return delay
  }

  /** Reads the lag and dead letters when due; the holder also takes the dead letters put back for redelivery. */
  private async inspect (held: boolean): Promise<void> {
    if (Date.now() - this.inspectedAt < this.inspectEvery) return
    const { storage } = this.config
    // Known to the storage: the lease taken just before created it.
    const state = (await storage.inspectSubscription(this.name, limits.maxLag))!
    this.inspectedAt = Date.now()
    this.lag = { events: state.lagEvents, oldestAt: state.oldestAt }
    this.deadLetters = state.deadLetters
    if (held && this.deadLetters > 0) await this.session!.redeliver(() => storage.readRedeliveries(this.name, BATCH))
  }

  private startSession (checkpoint: string | null): Deliveries {
    const { concurrency, retry, maxBackoff, leaseTtl } = this.options
    this.failures.clear()
    this.lastEventId = checkpoint
    const session = new Deliveries({
      concurrency,
      retry,
      maxBackoff,
      attempt: attempt => this.attempt(attempt),
      record: progress => this.record(progress),
      changed: () => { this.changed(session) }
    }, checkpoint)
    this.session = session
    // Renewed while working, so long or failing deliveries keep the lease.
    this.renewal = setInterval(() => { this.renew(session) }, Math.floor(leaseTtl / 3)).unref()
    return session
  }

  /** Ends the deliveries: at close, after the handler calls in flight are recorded; when lost, once they return. */
  private async endSession (): Promise<void> {
    const session = this.session
    if (session === undefined) return
    clearInterval(this.renewal)
    if (this.stopped && !session.lost) await session.stop()
    else {
      session.lose()
      await session.settled()
    }
    this.lastEventId = session.lastEventId
    this.session = undefined
  }

  /** One attempt of one event: the one place the handler is called. */
  private async attempt ({ event, number, last }: Attempt): Promise<AttemptResult> {
    const { telemetry, readonly } = this.config
    const started = performance.now()
    try {
      await telemetry.deliver(this.name, event, () => this.call(readonly(event)))
      this.failures.delete(event.id)
      telemetry.delivered(this.name, 'ok', (performance.now() - started) / 1000)
      return { outcome: 'ok' }
    } catch (thrown) {
      const error = storable(describeFailure(thrown))
      const outcome = last ? 'dead_lettered' : 'failed'
      telemetry.delivered(this.name, outcome, (performance.now() - started) / 1000)
      this.failed(event, number, thrown, error, last)
      return { outcome, error }
    }
  }

  /**
   * Calls the handler with a signal that aborts once `timeout` has passed; the call then counts as
   * failed, so a handler that never answers frees its slot, is retried or set aside, and lets close end.
   */
  private call (event: OrderEvent): Promise<void> {
    const { timeout } = this.options
    const controller = new AbortController()
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const reason = new codes.ORDER_HANDLER_TIMEOUT(timeout)
        controller.abort(reason)
        reject(reason)
      }, timeout)
      // A handler that throws at once rejects here too; one that settles after its timeout changes nothing.
      new Promise<unknown>(_resolve => { _resolve(this.handler(event, { signal: controller.signal })) }).then(() => {
        clearTimeout(timer)
        resolve()
      }, (err: unknown) => {
        clearTimeout(timer)
        reject(err)
      })
    })
  }

  private failed (event: OrderEvent, attempts: number, thrown: unknown, error: string, last: boolean): void {
    this.failures.delete(event.id)
    if (!last) this.failures.set(event.id, { eventId: event.id, attempts, error })
    const then = last ? `set aside as a dead letter after ${attempts} attempts` : 'retrying'
    // Logged as an Error, whatever was thrown: a value without a prototype cannot be serialized as one.
    this.config.log.error({ err: loggableFailure(thrown), subscription: this.name, eventId: event.id, attempts },
      `fastify-order: subscription "${this.name}" failed to handle event ${event.id}; ${then}`)
  }

  /** Stores one batch of progress: the outcomes above the checkpoint first, then the checkpoint's move. */
  private async record ({ from, to, outcomes }: Progress): Promise<boolean> {
    const { storage, log } = this.config
    try {
      if (outcomes.finished.length > 0 || outcomes.deadLetters.length > 0 || outcomes.delivered.length > 0) {
        if (!await storage.recordOutcomes(this.name, this.holder, outcomes)) return false
        if (outcomes.deadLetters.length > 0 || outcomes.delivered.length > 0) this.inspectedAt = 0
      }
      return to === from || await storage.checkpoint(this.name, this.holder, from, to!)
    } catch (err) {
      log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not reach the storage; retrying`)
      return false
    }
  }

  /** Progress was recorded, or the session was lost: read more, or start again, without waiting for the poll. */
  private changed (session: Deliveries): void {
    if (session.lost || (this.waitingForRoom && this.window - session.pending >= BATCH / 2)) {
      this.waitingForRoom = false
      this.poll.interrupt()
    }
  }

  private renew (session: Deliveries): void {
    const { storage, log } = this.config
    const asked = Date.now()
    // An answer that comes after the session ended changes nothing there: an ended session starts nothing.
    storage.lease({ name: this.name, holder: this.holder, ttl: this.options.leaseTtl, from: this.options.from }).then(lease => {
      if (lease.held) {
        session.extend(asked + this.options.leaseTtl)
      } else {
        this.active = false
        session.lose()
      }
    }, (err: unknown) => {
      log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not renew its lease; retrying`)
    })
  }

  private async release (): Promise<void> {
    this.active = false
    try {
      await this.config.storage.release(this.name, this.holder)
    } catch (err) {
      // The lease lapses after its TTL all the same.
      this.config.log.warn({ err, subscription: this.name }, `fastify-order: subscription "${this.name}" could not release its lease`)
    }
  }
}
