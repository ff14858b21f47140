// Retention: the one owner of purging, of expired idempotency keys and of events older than eventRetention.
import type { FastifyBaseLogger } from 'fastify'
import type { OrderStorage } from '../storage/order-storage.js'

// One purge every hundred writes, of up to twice that: neither keys nor the feed can outgrow what
// retention keeps, and no purge does unbounded work.
const PURGE_EVERY = 100
const PURGE_BATCH = 200

export interface RetentionConfig {
  /** Without the event feed, only idempotency keys are purged. */
  storage: Pick<OrderStorage, 'purgeEvents' | 'purgeIdempotencyKeys'>
  /** How long events are kept at least, in milliseconds. */
  eventRetention: number
  log: FastifyBaseLogger
}

export interface Retention {
  /** Called after each stored change; purges now and then. */
  written: () => void
  /** Waits for a purge under way. */
  close: () => Promise<void>
}

export function createRetention ({ storage, eventRetention, log }: RetentionConfig): Retention {
  let writes = 0
  let purging: Promise<void> | undefined

  /** Runs one purge; a failure is logged, and the next purge retries. */
  async function attempt (what: string, purge: () => Promise<number>): Promise<void> {
    try {
      await purge()
    } catch (err) {
      log.warn({ err }, `fastify-order: purging expired ${what} failed; the next purge retries`)
    }
  }

  async function purge (): Promise<void> {
    const now = Date.now()
    await attempt('idempotency keys', () => storage.purgeIdempotencyKeys(new Date(now).toISOString(), PURGE_BATCH))
    const { purgeEvents } = storage
    if (purgeEvents !== undefined) await attempt('events', () => purgeEvents.call(storage, new Date(now - eventRetention).toISOString(), PURGE_BATCH))
    purging = undefined
  }

  return {
    written () {
      // The first write after start purges too, so a restarted app catches up at once.
      if (writes++ % PURGE_EVERY === 0 && purging === undefined) purging = purge()
    },
    async close () {
      await purging
    }
  }
}
