// The event feed as app.orders reads it: listEvents, never a silent skip.
import { codes } from './errors.js'
import { isEventId, type EventPage, type OrderEvent } from './events.js'
import { DEFAULT_EVENT_PAGE, type ListEventsQuery } from './schemas.js'
import type { EventFeedStore } from './storage/types.js'

/** Reads a page of the feed after `after`; ORDER_EVENT_NOT_FOUND when `after` names no event in it. */
export async function listEvents (
  storage: Pick<EventFeedStore, 'listEvents'>,
  { after, limit = DEFAULT_EVENT_PAGE }: ListEventsQuery,
  readonly: (event: OrderEvent) => OrderEvent
): Promise<EventPage> {
  if (after !== undefined && !isEventId(after)) throw new codes.ORDER_EVENT_NOT_FOUND(after)
  const items = await storage.listEvents({ after, limit })
  if (items === undefined) throw new codes.ORDER_EVENT_NOT_FOUND(after)
  return { items: items.map(readonly) }
}
