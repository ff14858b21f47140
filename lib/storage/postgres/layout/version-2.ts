// Layout version 2: feed positions with an epoch, so they survive a restore into another cluster.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

/**
 * Version 2: feed positions that survive a logical copy. A position was (writing transaction,
 * sequence); transaction ids belong to the cluster that issued them, so after pg_dump/pg_restore or
 * logical replication into another cluster, restored events could sort after new ones or never be
 * readable. Positions become (epoch, transaction, sequence): the storage starts a new epoch when it
 * finds positions the cluster cannot have issued (see schema.ts), and every event of an earlier
 * epoch is committed, so it sorts first and is readable at once.
 */
function epochs ({ events, subscriptions, schema, epoch, indexes }: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${schema} (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      version integer NOT NULL,
      epoch integer NOT NULL
    )`,
    `INSERT INTO ${schema} (version, epoch) VALUES (1, 1) ON CONFLICT (id) DO NOTHING`,
    // Read at each insert, so a new epoch needs no DDL: an app role that only writes rows starts one.
    `CREATE OR REPLACE FUNCTION ${epoch}() RETURNS integer LANGUAGE sql STABLE AS $$ SELECT epoch FROM ${schema} $$`,
    // A constant default: a catalog change, no rewrite of existing rows.
    `ALTER TABLE ${events} ADD COLUMN IF NOT EXISTS epoch integer NOT NULL DEFAULT 1`,
    `ALTER TABLE ${events} ALTER COLUMN epoch SET DEFAULT ${epoch}()`,
    `ALTER TABLE ${subscriptions} ADD COLUMN IF NOT EXISTS epoch integer NOT NULL DEFAULT 1`,
    `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.feed} ON ${events} (epoch, tx, seq)`,
    `DROP INDEX CONCURRENTLY IF EXISTS ${indexes.position}`
  ]
}

export const version2: LayoutStep = tables => ({
  version: 2,
  summary: 'Feed positions that survive a restore into another cluster: events and subscriptions get an ' +
      'epoch (a catalog change each, with a brief ACCESS EXCLUSIVE lock), the feed index is rebuilt on ' +
      '(epoch, tx, seq) CONCURRENTLY (writes go on), and the version table appears.',
  statements: epochs(tables)
})
