// Layout version 5: deliveries that keep up: events finished above a subscription's checkpoint, and dead letters.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

/**
 * Version 5: a subscription with many events in flight records those it finished above an older
 * unfinished one, so a successor redelivers only what was in flight; and events whose retry schedule
 * ran out are kept as dead letters, with a copy of the event (retention may purge it from the feed)
 * and its feed position, so they list in feed order. Both tables are new: created plainly, with
 * their indexes, locking nothing that exists.
 */
function deliveries ({ finished, deadLetters, indexes }: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${finished} (
      name text COLLATE "C" NOT NULL,
      epoch integer NOT NULL,
      tx xid8 NOT NULL,
      seq bigint NOT NULL,
      PRIMARY KEY (name, epoch, tx, seq)
    )`,
    `CREATE TABLE IF NOT EXISTS ${deadLetters} (
      name text COLLATE "C" NOT NULL,
      event_id uuid NOT NULL,
      epoch integer NOT NULL,
      tx xid8 NOT NULL,
      seq bigint NOT NULL,
      event json NOT NULL,
      attempts integer NOT NULL,
      error text NOT NULL,
      at text COLLATE "C" NOT NULL,
      redeliver boolean NOT NULL DEFAULT false,
      PRIMARY KEY (name, event_id)
    )`,
    `CREATE INDEX IF NOT EXISTS ${indexes.deadLettersFeed} ON ${deadLetters} (name, epoch, tx, seq)`
  ]
}

export const version5: LayoutStep = tables => ({
  version: 5,
  summary: 'Deliveries that keep up: a table of the events each subscription finished above its checkpoint, ' +
      'and a table of dead letters with an index in feed order; both new, so nothing existing is locked.',
  statements: deliveries(tables)
})
