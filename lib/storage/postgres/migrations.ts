// The versions of the storage's layout, from the one release 0.1 creates: each step's SQL, safe to run again.
import type { Tables } from './tables.js'

export interface SchemaStep {
  /** The layout version the step makes. */
  version: number
  /** What the step changes, and what it locks. */
  summary: string
  /**
   * Statements to run one by one, in order, outside any transaction: an index is built
   * CONCURRENTLY, which PostgreSQL refuses inside one. Each is safe to run again after a failure.
   */
  statements: string[]
}

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

/** Marks a statement to run again and again until it returns no row: a backfill in batches. */
export const REPEAT = '-- Run again until it returns no row.\n'

/** How many orders one backfill statement numbers: a short transaction that locks only those rows. */
const BACKFILL_BATCH = 1000

/**
 * Version 3: order numbers and references. The columns come nullable (catalog changes), and orders
 * stored before get numbers in creation order, 1,000 per statement: each a short transaction that
 * locks only its rows, walking (created_at, id) on from the last order numbered (found through the
 * number index, built first while the column is empty). Then the sequence becomes the column's
 * default, so orders that instances of an earlier release still write are numbered too, and a second
 * pass numbers those that came in meanwhile. NOT NULL is proven by a constraint validated without
 * blocking writes, which makes SET NOT NULL a catalog change. The reference indexes are built
 * CONCURRENTLY.
 */
function numbersAndReferences ({ name, orders, numbers, indexes }: Tables): string[] {
  const notNull = `"${name}_number_not_null"`
  const backfill = (after: string) => `${REPEAT}WITH last AS (
      SELECT created_at, id FROM ${orders} WHERE number = (SELECT max(number) FROM ${orders})
    ), batch AS (
      SELECT id, nextval('${numbers}') AS number FROM (
        SELECT id FROM ${orders} WHERE number IS NULL${after} ORDER BY created_at, id LIMIT ${BACKFILL_BATCH} FOR UPDATE
      ) AS oldest
    )
    UPDATE ${orders} AS o SET number = batch.number, document = ('{"number":' || batch.number || ',' || substr(o.document::text, 2))::json
    FROM batch WHERE o.id = batch.id
    RETURNING 1`
  return [
    `CREATE SEQUENCE IF NOT EXISTS ${numbers} AS bigint`,
    `ALTER TABLE ${orders} ADD COLUMN IF NOT EXISTS number bigint`,
    `ALTER TABLE ${orders} ADD COLUMN IF NOT EXISTS reference text COLLATE "C"`,
    `ALTER SEQUENCE ${numbers} OWNED BY ${orders}.number`,
    `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.number} ON ${orders} (number)`,
    backfill(' AND (created_at, id) > (coalesce((SELECT created_at FROM last), \'\'), coalesce((SELECT id FROM last), \'\'))'),
    `ALTER TABLE ${orders} ALTER COLUMN number SET DEFAULT nextval('${numbers}')`,
    backfill(''),
    `DO $$ BEGIN
      ALTER TABLE ${orders} ADD CONSTRAINT ${notNull} CHECK (number IS NOT NULL) NOT VALID;
    EXCEPTION WHEN duplicate_object THEN NULL;
    END $$`,
    `ALTER TABLE ${orders} VALIDATE CONSTRAINT ${notNull}`,
    `ALTER TABLE ${orders} ALTER COLUMN number SET NOT NULL`,
    `ALTER TABLE ${orders} DROP CONSTRAINT IF EXISTS ${notNull}`,
    `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.reference} ON ${orders} (customer_id, reference) WHERE reference IS NOT NULL`,
    `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexes.referenceCreated} ON ${orders} (reference, created_at, id) WHERE reference IS NOT NULL`
  ]
}

/** Every step, in order; the last one's version is the layout this release writes. */
export function schemaSteps (tables: Tables): SchemaStep[] {
  return [
    {
      version: 1,
      summary: 'Orders, idempotency keys, the event feed and subscriptions: the layout of release 0.1.',
      statements: releaseOne(tables)
    },
    {
      version: 2,
      summary: 'Feed positions that survive a restore into another cluster: events and subscriptions get an ' +
        'epoch (a catalog change each, with a brief ACCESS EXCLUSIVE lock), the feed index is rebuilt on ' +
        '(epoch, tx, seq) CONCURRENTLY (writes go on), and the version table appears.',
      statements: epochs(tables)
    },
    {
      version: 3,
      summary: 'Order numbers and references: two nullable columns and the number sequence (catalog changes, ' +
        'a brief ACCESS EXCLUSIVE lock each); existing orders numbered in creation order, 1,000 rows per ' +
        'transaction (row locks only); NOT NULL through a constraint validated under SHARE UPDATE EXCLUSIVE ' +
        '(writes go on); the number, (customer, reference) and (reference, created_at, id) indexes built CONCURRENTLY.',
      statements: numbersAndReferences(tables)
    }
  ]
}

/** The layout version this release writes. */
export const SCHEMA_VERSION = 3
