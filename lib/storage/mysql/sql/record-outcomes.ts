// recordOutcomes on MySQL: events finished above the checkpoint, dead letters stored or updated, redelivered ones removed, in one transaction while the holder holds the lease.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Transaction } from './create-order.js'
import type { Tables } from '../tables.js'

export function recordOutcomes ({ subscriptions, events, finished, deadLetters }: Tables, transaction: Transaction): SubscriptionsCapability['recordOutcomes'] {
  // The lease row is locked first, so the lease cannot change hands halfway.
  const held = `SELECT position FROM ${subscriptions} WHERE name = ? AND holder = ? FOR UPDATE`
  const mark = `INSERT INTO ${finished} (name, position) SELECT ?, position FROM ${events} WHERE id IN (?) AND position > ?
    ON DUPLICATE KEY UPDATE ${finished}.name = VALUES(name)`
  // One redelivered that failed again is updated in place (its event may be purged from the feed by
  // now); a new one copies the event and its position from the feed. `redeliver` counts down to 0.
  const update = `UPDATE ${deadLetters} SET attempts = ?, error = ?, at = ?, redeliver = 0 WHERE name = ? AND event_id = ?`
  const store = `INSERT INTO ${deadLetters} (name, event_id, position, event, attempts, error, at)
    SELECT ?, id, position, payload, ?, ?, ? FROM ${events} WHERE id = ? AND position IS NOT NULL
    ON DUPLICATE KEY UPDATE ${deadLetters}.attempts = VALUES(attempts), ${deadLetters}.error = VALUES(error), ${deadLetters}.at = VALUES(at), ${deadLetters}.redeliver = 0`
  const delivered = `DELETE FROM ${deadLetters} WHERE name = ? AND event_id IN (?)`

  return (name, holder, outcomes) => transaction(async ({ run, write }) => {
    const [lease] = await run<{ position: string }>(held, [name, holder])
    if (lease === undefined) return false
    if (outcomes.finished.length > 0) await write(mark, [name, outcomes.finished, lease.position])
    for (const { eventId, attempts, error, at } of outcomes.deadLetters) {
      const values = [attempts, JSON.stringify(error), at]
      if ((await write(update, [...values, name, eventId])).affectedRows === 0) await write(store, [name, ...values, eventId])
    }
    if (outcomes.delivered.length > 0) await write(delivered, [name, outcomes.delivered])
    return true
  })
}
