// Layout version 3: order numbers (backfilled in batches) and references.
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'
import { REPEAT } from './step.js'

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

export const version3: LayoutStep = tables => ({
  version: 3,
  summary: 'Order numbers and references: two nullable columns and the number sequence (catalog changes, ' +
      'a brief ACCESS EXCLUSIVE lock each); existing orders numbered in creation order, 1,000 rows per ' +
      'transaction (row locks only); NOT NULL through a constraint validated under SHARE UPDATE EXCLUSIVE ' +
      '(writes go on); the number, (customer, reference) and (reference, created_at, id) indexes built CONCURRENTLY.',
  statements: numbersAndReferences(tables)
})
