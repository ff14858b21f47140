// inspectSubscription on MySQL: how many listed events a subscription has not finished (up to a limit), the oldest one's time, and its dead letters.
import type { SubscriptionState, SubscriptionsCapability } from '../../order-storage.js'
import type { Session } from '../client.js'
import type { Tables } from '../tables.js'
import { unfinishedAfter } from './read-subscription.js'

export function inspectSubscription (tables: Tables, session: Session, sequence: () => Promise<void>): SubscriptionsCapability['inspectSubscription'] {
  const { subscriptions, deadLetters, events } = tables
  const state = `SELECT s.position, (SELECT COUNT(*) FROM ${deadLetters} WHERE name = ?) AS deadLetters
    FROM (SELECT 1) AS one LEFT JOIN ${subscriptions} AS s ON s.name = ?`
  // The lag is read as readSubscription reads: after the checkpoint, none finished.
  const lag = `SELECT lag.events, CAST(e.at AS CHAR) AS oldestAt FROM (
      SELECT COUNT(*) AS events, MIN(page.position) AS first FROM (${unfinishedAfter(tables, 'e.position')}) AS page
    ) AS lag LEFT JOIN ${events} AS e ON e.position = lag.first`

  return async (name, lagLimit): Promise<SubscriptionState | undefined> => {
    const [{ position, deadLetters: dead }] = await session.run<{ position: string | null, deadLetters: string }>(state, [name, name]) as [{ position: string | null, deadLetters: string }]
    if (position === null) return Number(dead) > 0 ? { lagEvents: 0, oldestAt: null, deadLetters: Number(dead) } : undefined
    await sequence()
    const [{ events: count, oldestAt }] = await session.run<{ events: string, oldestAt: string | null }>(lag, [position, name, lagLimit]) as [{ events: string, oldestAt: string | null }]
    return { lagEvents: Number(count), oldestAt, deadLetters: Number(dead) }
  }
}
