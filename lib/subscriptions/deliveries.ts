// One lease holder's deliveries: up to `concurrency` events at once, one order's one at a time and in feed order, retried on a policy, recorded in batches.
import type { OrderEvent } from '../feed/events.js'
import type { DeliveryOutcomes } from '../storage/order-storage.js'

/** `forever`: capped exponential backoff until it succeeds; `schedule`: the wait after each failed attempt, then a dead letter. */
export type RetryPolicy = 'forever' | { readonly schedule: readonly number[] }

const FIRST_BACKOFF = 100

/** The wait after `attempts` failed attempts, or undefined when none is left and the event is set aside. */
export function retryDelay (retry: RetryPolicy, attempts: number, maxBackoff: number): number | undefined {
  if (retry === 'forever') return Math.min(FIRST_BACKOFF * 2 ** Math.min(attempts - 1, 30), maxBackoff)
  return retry.schedule[attempts - 1]
}

/** One attempt of one event: its number (1 for the first), and whether a failure sets it aside. */
export interface Attempt {
  event: OrderEvent
  number: number
  last: boolean
}

/** What became of an attempt: handled, failed (to be retried), or failed for the last time. */
export type AttemptResult = { outcome: 'ok' } | { outcome: 'failed' | 'dead_lettered', error: string }

/** One batch to record: the checkpoint's move (`from` to `to`, the same when it stays) and the outcomes above it. */
export interface Progress {
  from: string | null
  to: string | null
  outcomes: DeliveryOutcomes
}

export interface DeliveriesConfig {
  concurrency: number
  retry: RetryPolicy
  maxBackoff: number
  /** Runs one attempt; never rejects. */
  attempt: (attempt: Attempt) => Promise<AttemptResult>
  /** Stores a batch; false when this holder lost the lease or the storage failed. Never rejects. */
  record: (progress: Progress) => Promise<boolean>
  /** Something was recorded, or the session was lost: the runner may read more, or start again. */
  changed: () => void
}

/** An event being delivered: read from the feed after the checkpoint, or a dead letter put back. */
interface Delivery {
  event: OrderEvent
  /** Read order: the oldest ready delivery goes first. */
  seq: number
  /** A feed event's predecessor in the feed as read: the checkpoint once it is the oldest unfinished. Undefined for a redelivery. */
  previous: string | null | undefined
  attempts: number
  /** Holds a concurrency slot: running, or finished and not recorded yet (or waiting, with one slot and `forever`). */
  slot: boolean
  timer?: NodeJS.Timeout
  result?: AttemptResult & { at: string }
  /** The unfinished feed deliveries read just before and after it. */
  older?: Delivery | undefined
  newer?: Delivery | undefined
}

/** Inserts `delivery` into `list`, kept in read order. */
function insertBySeq (list: Delivery[], delivery: Delivery): void {
  let low = 0
  let high = list.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (list[middle]!.seq < delivery.seq) low = middle + 1
    else high = middle
  }
  list.splice(low, 0, delivery)
}

/**
 * The deliveries of one lease: a session from taking the lease to losing it or closing. Progress is
 * recorded one batch at a time; a delivery keeps its slot until its outcome is recorded, so what a
 * crash redelivers is at most what was in flight.
 */
export class Deliveries {
  private seq = 0
  private checkpoint: string | null
  private cursor: string | null
  /** The unfinished feed deliveries in read (feed) order, linked from the oldest to the newest, and how many. */
  private oldest: Delivery | undefined
  private newest: Delivery | undefined
  private unfinished = 0
  /** Redelivered dead letters not recorded yet. */
  private readonly redeliveries = new Set<string>()
  /** How many batches have been recorded, and the redeliveries each recorded, kept until a read that started after them. */
  private batches = 0
  private readonly redelivered = new Map<string, number>()
  /** Per order, its deliveries not finished: only the first may run. */
  private readonly orders = new Map<string, Delivery[]>()
  private readonly ready: Delivery[] = []
  private readonly waiting = new Set<Delivery>()
  private finished: Delivery[] = []
  private slots = 0
  private readonly calls = new Set<Promise<void>>()
  private recording: Promise<void> | undefined
  private state: 'running' | 'stopping' | 'lost' = 'running'
  private leaseUntil = 0
  // Section 8's subscription: with one slot and `forever`, a failing event keeps its slot while it waits.
  private readonly waitInSlot: boolean

  constructor (private readonly config: DeliveriesConfig, checkpoint: string | null) {
    this.checkpoint = this.cursor = checkpoint
    this.waitInSlot = config.concurrency === 1 && config.retry === 'forever'
  }

  /** The last event of the unbroken run of recorded ones. */
  get lastEventId (): string | null { return this.checkpoint }
  /** Where the next read starts: after the last event read, or after the checkpoint when everything read is recorded. */
  get readAfter (): string | undefined { return this.cursor === this.checkpoint ? undefined : this.cursor! }
  /** Events held and not finished: the read window. */
  get pending (): number { return this.unfinished + this.redeliveries.size }
  /** Events started and not recorded as finished: running, waiting for a retry, or finished and not recorded yet. */
  get inFlight (): number { return this.slots + (this.waitInSlot ? 0 : this.waiting.size) }
  get lost (): boolean { return this.state === 'lost' }
  /** Nothing held, running or being recorded. */
  get idle (): boolean { return this.pending === 0 && this.slots === 0 }

  /** The lease is held until `until` (Date.now() time): nothing starts after it unless renewed. */
  extend (until: number): void {
    this.leaseUntil = until
    this.pump()
  }

  /** Feed events read after `readAfter`, in feed order. */
  add (events: readonly OrderEvent[]): void {
    for (const event of events) {
      const delivery: Delivery = { event, seq: this.seq++, previous: this.cursor, attempts: 0, slot: false }
      this.cursor = event.id
      this.link(delivery)
      this.enqueue(delivery)
    }
    this.pump()
  }

  /** Dead letters put back, as `read` lists them: delivered after the events of their order already held. */
  async redeliver (read: () => Promise<readonly OrderEvent[]>): Promise<void> {
    const readAt = this.batches
    const events = await read()
    for (const event of events) {
      // Read again while it is delivered: the storage lists it until its outcome is recorded.
      if (this.redeliveries.has(event.id)) continue
      // Or read before its outcome was recorded, the answer coming after (another connection): no longer put back.
      if ((this.redelivered.get(event.id) ?? readAt) > readAt) continue
      this.redeliveries.add(event.id)
      this.enqueue({ event, seq: this.seq++, previous: undefined, attempts: 0, slot: false })
    }
    // A later read starts after these records, and sees them.
    for (const [id, batch] of this.redelivered) if (batch <= readAt) this.redelivered.delete(id)
    this.pump()
  }

  /** The lease was lost: nothing more starts or is recorded. */
  lose (): void {
    if (this.state === 'lost') return
    this.state = 'lost'
    this.halt()
    this.config.changed()
  }

  /** Starts nothing more, leaves waiting retries to the next holder, and records what the calls in flight finish. */
  async stop (): Promise<void> {
    if (this.state === 'running') this.state = 'stopping'
    this.halt()
    await this.settled()
  }

  /** Resolves once no handler call is under way and nothing is being recorded. */
  async settled (): Promise<void> {
    while (this.calls.size > 0 || this.recording !== undefined) await Promise.all([...this.calls, this.recording])
  }

  private halt (): void {
    for (const delivery of this.waiting) clearTimeout(delivery.timer)
    this.waiting.clear()
    this.ready.length = 0
  }

  private enqueue (delivery: Delivery): void {
    const key = delivery.event.order.id
    const queue = this.orders.get(key)
    if (queue !== undefined) {
      queue.push(delivery)
      return
    }
    this.orders.set(key, [delivery])
    insertBySeq(this.ready, delivery)
  }

  private pump (): void {
    while (this.ready.length > 0 && this.slots < this.config.concurrency && this.startable()) {
      const delivery = this.ready.shift()!
      delivery.slot = true
      this.slots++
      this.start(delivery)
    }
  }

  private startable (): boolean {
    return this.state === 'running' && Date.now() < this.leaseUntil
  }

  private start (delivery: Delivery): void {
    const call = this.attempt(delivery).finally(() => { this.calls.delete(call) })
    this.calls.add(call)
  }

  private async attempt (delivery: Delivery): Promise<void> {
    const number = ++delivery.attempts
    const delay = retryDelay(this.config.retry, number, this.config.maxBackoff)
    const result = await this.config.attempt({ event: delivery.event, number, last: delay === undefined })
    if (this.state === 'lost') return
    if (result.outcome === 'failed') this.retryLater(delivery, delay!)
    else this.finish(delivery, { ...result, at: new Date().toISOString() })
  }

  /** Waits `delay` before the next attempt, holding no slot (unless this is section 8's subscription). */
  private retryLater (delivery: Delivery, delay: number): void {
    if (this.state !== 'running' || !this.waitInSlot) this.freeSlot(delivery)
    if (this.state !== 'running') return
    this.waiting.add(delivery)
    delivery.timer = setTimeout(() => {
      // Its turn again: the oldest ready event, it takes the first free slot (its own, when it kept one).
      this.waiting.delete(delivery)
      this.freeSlot(delivery)
      insertBySeq(this.ready, delivery)
      this.pump()
    }, delay).unref()
    this.pump()
  }

  private freeSlot (delivery: Delivery): void {
    if (!delivery.slot) return
    delivery.slot = false
    this.slots--
  }

  /** Handled or set aside: the order's next event may start, and the outcome is recorded. */
  private finish (delivery: Delivery, result: Delivery['result']): void {
    delivery.result = result
    if (delivery.previous !== undefined) this.unlink(delivery)
    this.finished.push(delivery)
    const key = delivery.event.order.id
    const queue = this.orders.get(key)!
    queue.shift()
    if (queue.length === 0) this.orders.delete(key)
    else if (this.state === 'running') insertBySeq(this.ready, queue[0]!)
    this.recording ??= this.record()
    this.pump()
  }

  /** Records finished deliveries a batch at a time until none is left, freeing their slots. */
  private async record (): Promise<void> {
    while (this.finished.length > 0 && this.state !== 'lost') {
      const batch = this.finished
      this.finished = []
      const progress = this.progressOf(batch)
      if (!await this.config.record(progress)) {
        this.lose()
        break
      }
      this.checkpoint = progress.to
      this.batches++
      for (const delivery of batch) {
        this.freeSlot(delivery)
        // A feed delivery leaves alone a redelivery of the same event, read while this one was being recorded.
        if (delivery.previous === undefined && this.redeliveries.delete(delivery.event.id)) this.redelivered.set(delivery.event.id, this.batches)
      }
      this.config.changed()
      this.pump()
    }
    this.recording = undefined
  }

  private link (delivery: Delivery): void {
    delivery.older = this.newest
    if (this.newest === undefined) this.oldest = delivery
    else this.newest.newer = delivery
    this.newest = delivery
    this.unfinished++
  }

  private unlink ({ older, newer }: Delivery): void {
    if (older === undefined) this.oldest = newer
    else older.newer = newer
    if (newer === undefined) this.newest = older
    else newer.older = older
    this.unfinished--
  }

  /** The batch as the storage records it: the checkpoint moves to just before the oldest unfinished event. */
  private progressOf (batch: readonly Delivery[]): Progress {
    const { oldest } = this
    const to = oldest === undefined ? this.cursor : oldest.previous!
    const outcomes: DeliveryOutcomes = {
      finished: batch.filter(d => d.previous !== undefined && oldest !== undefined && d.seq > oldest.seq).map(d => d.event.id),
      deadLetters: batch.flatMap(({ event, attempts, result }) => result!.outcome === 'dead_lettered'
        ? [{ eventId: event.id, attempts, error: result!.error, at: result!.at }]
        : []),
      delivered: batch.filter(d => d.previous === undefined && d.result!.outcome === 'ok').map(d => d.event.id)
    }
    return { from: this.checkpoint, to, outcomes }
  }
}
