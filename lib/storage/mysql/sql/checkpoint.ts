// checkpoint on MySQL: a compare-and-set on the holder and the last event handled, forgetting the finished events it passes.
import type { SubscriptionsCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'

export function checkpoint ({ events, subscriptions, finished }: Tables, session: Session): SubscriptionsCapability['checkpoint'] {
  const move = `UPDATE ${subscriptions} AS s JOIN ${events} AS e ON e.id = ? AND e.position IS NOT NULL
    SET s.position = e.position, s.last_event_id = e.id, s.changes = s.changes + 1
    WHERE s.name = ? AND s.holder = ? AND s.last_event_id <=> ?`
  // Left behind only if this fails: below the checkpoint, nothing reads them.
  const passed = `DELETE FROM ${finished} WHERE name = ? AND position <= (SELECT position FROM ${events} WHERE id = ?)`

  return async (name, holder, lastEventId, eventId) => {
    if ((await session.write(move, [eventId, name, holder, lastEventId])).affectedRows !== 1) return false
    await session.write(passed, [name, eventId])
    return true
  }
}
