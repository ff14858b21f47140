// A feed held back: how long one open transaction has stalled every subscription, and the warnings while it lasts.
import type { FastifyBaseLogger } from 'fastify'

/** What `app.orders.feedHealth()` returns. */
export interface FeedHealth {
  /** How long the transaction that holds the feed back has been running, in seconds; 0 while none does. */
  heldBackSeconds: number
  /** That transaction's backend, when the storage can tell: not for a prepared transaction, nor for a session of a role this one may not see. */
  pid?: number
}

/** The health of a feed nothing can hold back: memory's, and that of any storage without `feedHealth`. */
export async function feedNeverHeldBack (): Promise<FeedHealth> {
  return { heldBackSeconds: 0 }
}

/** The clock and the timers the watch runs on; tests give their own. */
export interface WatchClock {
  now: () => number
  setTimeout: (run: () => void, ms: number) => unknown
  clearTimeout: (timer: any) => void
}

const systemClock: WatchClock = {
  now: Date.now,
  // The watch never keeps the process alive.
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout
}

export interface FeedStallWatchConfig {
  /** Reads the feed's health: the storage's `feedHealth`. */
  read: () => Promise<FeedHealth>
  /** Milliseconds a transaction may hold the feed back before a warning; 0 turns the watch off. */
  feedStallWarning: number
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>
  clock?: WatchClock
}

export interface FeedStallWatch {
  /** Looks at the feed every `pollIntervalOf(feedStallWarning)` ms until `close`. */
  start: () => void
  /** One look: reads the health, warns or says the stall ended. Never throws. */
  check: () => Promise<void>
  /** Stops looking, after the look under way. */
  close: () => Promise<void>
}

/** How often the watch looks: a quarter of the threshold, so a warning comes at most a quarter late; between 1 s and 1 min. */
export function pollIntervalOf (feedStallWarning: number): number {
  return Math.min(Math.max(Math.round(feedStallWarning / 4), 1000), 60_000)
}

/** Two looks at one transaction compute its start from two clocks: within this, it is the same start. */
const SAME_START = 1000

interface Stall {
  pid: number | undefined
  startedAt: number
  /** The age, in ms, at which the next warning is due: the threshold, then twice, four times... */
  next: number
}

function holderOf ({ pid, startedAt }: Stall): string {
  const since = new Date(startedAt).toISOString()
  return pid === undefined
    ? `a transaction open since ${since} (a prepared transaction, or a session of a role this one may not see, so no pid)`
    : `the transaction of backend pid ${pid}, open since ${since}`
}

/**
 * Warns once a transaction has held the feed back for `feedStallWarning` ms, naming its pid and its
 * start, and again each time its age doubles; says so once it no longer holds the feed.
 */
export function watchFeedStall ({ read, feedStallWarning, log, clock = systemClock }: FeedStallWatchConfig): FeedStallWatch {
  const interval = pollIntervalOf(feedStallWarning)
  let stall: Stall | undefined
  let unreadable = false
  let timer: unknown
  let looking: Promise<void> | undefined
  let closed = false

  function ended (current: Stall): void {
    // Not `pid`: the logger's own field, the process id, would stand in for a holder without one.
    log.info({ backendPid: current.pid, startedAt: new Date(current.startedAt).toISOString() },
      `fastify-order: ${holderOf(current)} no longer holds the event feed back`)
  }

  async function check (): Promise<void> {
    if (feedStallWarning === 0) return
    let health: FeedHealth
    try {
      health = await read()
    } catch (err) {
      // Said once per run of failures: the storage's other users report the outage too.
      if (!unreadable) log.warn({ err }, 'fastify-order: could not read how long the event feed is held back; looking again at the next interval')
      unreadable = true
      return
    }
    unreadable = false
    const age = health.heldBackSeconds * 1000
    const startedAt = clock.now() - age
    if (stall !== undefined && (age < feedStallWarning || health.pid !== stall.pid || Math.abs(startedAt - stall.startedAt) > SAME_START)) {
      ended(stall)
      stall = undefined
    }
    if (age < feedStallWarning) return
    stall ??= { pid: health.pid, startedAt, next: feedStallWarning }
    if (age < stall.next) return
    const heldBackSeconds = Math.round(health.heldBackSeconds)
    log.warn({ backendPid: stall.pid, startedAt: new Date(stall.startedAt).toISOString(), heldBackSeconds },
      `fastify-order: ${holderOf(stall)} has held the event feed back for ${heldBackSeconds} s: no subscription gets an event written since it began until it commits or rolls back`)
    while (stall.next <= age) stall.next *= 2
  }

  function schedule (): void {
    timer = clock.setTimeout(() => {
      looking = check().then(() => { if (!closed) schedule() })
    }, interval)
  }

  return {
    start () {
      if (feedStallWarning > 0 && !closed && timer === undefined) schedule()
    },
    check,
    async close () {
      closed = true
      clock.clearTimeout(timer)
      await looking
    }
  }
}
