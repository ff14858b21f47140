// Layout version 1, the one release 0.1 creates: orders, idempotency keys, the event feed and subscriptions.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

/**
 * Version 1, the layout of release 0.1. Text columns use the "C" collation so ids and timestamps
 * order as JavaScript compares strings; created_at is the ISO string itself.
 */
function releaseOne ({ orders, keys, events, subscriptions, indexes }: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${orders} (
      id text COLLATE "C" PRIMARY KEY,
      customer_id text COLLATE "C" NOT NULL,
      status text COLLATE "C" NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      version bigint NOT NULL,
      document json NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS ${indexes.created} ON ${orders} (created_at, id)`,
    `CREATE INDEX IF NOT EXISTS ${indexes.customer} ON ${orders} (customer_id, created_at, id)`,
    `CREATE INDEX IF NOT EXISTS ${indexes.status} ON ${orders} (status, created_at, id)`,
    `CREATE INDEX IF NOT EXISTS ${indexes.customerStatus} ON ${orders} (customer_id, status, created_at, id)`,
    `CREATE TABLE IF NOT EXISTS ${keys} (
      key text COLLATE "C" PRIMARY KEY,
      fingerprint json NOT NULL,
      order_id text COLLATE "C" NOT NULL,
      expires_at text COLLATE "C" NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS ${indexes.keysExpiry} ON ${keys} (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${events} (
      id uuid PRIMARY KEY,
      aggregatetype text NOT NULL,
      aggregateid text COLLATE "C" NOT NULL,
      type text NOT NULL,
      payload json NOT NULL,
      at text COLLATE "C" NOT NULL,
      tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
      seq bigint GENERATED ALWAYS AS IDENTITY
    )`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${indexes.position} ON ${events} (tx, seq)`,
    `CREATE TABLE IF NOT EXISTS ${subscriptions} (
      name text COLLATE "C" PRIMARY KEY,
      holder text COLLATE "C",
      lease_expires_at timestamptz,
      held_at timestamptz NOT NULL,
      tx xid8 NOT NULL,
      seq bigint NOT NULL,
      last_event_id uuid,
      start_snapshot pg_snapshot
    )`
  ]
}

export const version1: LayoutStep = tables => ({
  version: 1,
  summary: 'Orders, idempotency keys, the event feed and subscriptions: the layout of release 0.1.',
  statements: releaseOne(tables)
})
