// The relations a storage owns: checked by name and kind at start, and an index left invalid by an interrupted build rebuilt.
import { codes } from '../../errors.js'
import type { Run } from './client.js'
import { schemaSteps } from './layout/steps.js'
import type { Tables } from './tables.js'

const bare = (quoted: string) => quoted.slice(1, -1)

/** Every relation the storage owns, as the layout this release writes has it: kind, and table for an index. */
export function relationsOf ({ orders, keys, events, subscriptions, schema, numbers, finished, deadLetters, indexes }: Tables): Array<[string, 'r' | 'i' | 'S', string?]> {
  return [
    ...[orders, keys, events, subscriptions, schema, finished, deadLetters].map((table): [string, 'r'] => [bare(table), 'r']),
    [bare(numbers), 'S'],
    ...[
      indexes.created, indexes.customer, indexes.status, indexes.customerStatus, indexes.number, indexes.referenceCreated,
      indexes.storeReference, indexes.storeCreated, indexes.storeCustomer, indexes.storeStatus, indexes.storeCustomerStatus,
      indexes.storeReferenceCreated, indexes.balanceCreated, indexes.balanceStatus, indexes.customerBalance, indexes.customerBalanceStatus,
      indexes.storeBalance, indexes.storeBalanceStatus, indexes.storeCustomerBalance, indexes.storeCustomerBalanceStatus
    ].map((index): [string, 'i', string] => [bare(index), 'i', bare(orders)]),
    [bare(indexes.keysExpiry), 'i', bare(keys)],
    [bare(indexes.feed), 'i', bare(events)],
    [bare(indexes.deadLettersFeed), 'i', bare(deadLetters)]
  ]
}

/**
 * Throws ORDER_INVALID_OPTIONS when a name the storage uses is taken by something else: another
 * storage's table or index (tables "x" and "x_customer" would share an index name), or a relation
 * of the host's.
 */
export async function checkRelations (query: Run, tables: Tables): Promise<void> {
  const expected = relationsOf(tables)
  const rows = await query<{ name: string, kind: string | null, table: string | null }>(`SELECT n.name, c.relkind::text AS kind, t.relname::text AS table
    FROM unnest($1::text[]) WITH ORDINALITY AS n (name, place)
    LEFT JOIN pg_class AS c ON c.oid = to_regclass(quote_ident(n.name))
    LEFT JOIN pg_index AS i ON i.indexrelid = c.oid
    LEFT JOIN pg_class AS t ON t.oid = i.indrelid
    ORDER BY n.place`, [expected.map(([name]) => name)])
  rows.forEach((row, i) => {
    const [name, kind, table] = expected[i]!
    if (row.kind === kind && (row.table ?? undefined) === table) return
    if (row.kind === null) {
      throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table "${tables.name}": "${name}" is missing while ${tables.schema} records the layout; ` +
        `restore it, or drop every relation whose name starts with "${tables.name}_" (and "${tables.name}") to start afresh`)
    }
    const found = row.kind === 'i' ? `is an index on "${row.table}"` : `is a relation of kind "${row.kind}"`
    const wanted = kind === 'r' ? 'a table' : kind === 'S' ? 'a sequence' : `an index on "${table}"`
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table "${tables.name}": "${name}" ${found}, where the storage needs ${wanted}; ` +
      'another storage or table uses its names, so choose another table option')
  })
}

/**
 * The layout's indexes that exist but are not valid or not ready: what a CREATE INDEX CONCURRENTLY
 * leaves when it is cancelled (a statement_timeout, a deploy that kills the process, a crash).
 * PostgreSQL neither enforces nor reads such an index, and IF NOT EXISTS skips it.
 */
export async function invalidIndexes (query: Run, tables: Tables): Promise<string[]> {
  const indexes = relationsOf(tables).filter(([, kind]) => kind === 'i')
  // Only an index on the storage's own table: a name another relation holds is checkRelations' to report.
  const rows = await query<{ name: string }>(`SELECT n.name FROM unnest($1::text[], $2::text[]) AS n (name, "table")
    JOIN pg_index AS i ON i.indexrelid = to_regclass(quote_ident(n.name)) AND i.indrelid = to_regclass(quote_ident(n."table"))
    WHERE NOT (i.indisvalid AND i.indisready)`, [indexes.map(([name]) => name), indexes.map(([, , table]) => table)])
  return rows.map(row => row.name)
}

/** The layout's own statement that builds `index`, made CONCURRENTLY so that writes go on meanwhile. */
function buildOf (tables: Tables, index: string): string {
  const statement = schemaSteps(tables).flatMap(step => step.statements).find(text => text.includes('INDEX') && text.includes(` "${index}" ON `))!
  return statement.replace(/INDEX (CONCURRENTLY )?IF NOT EXISTS/, 'INDEX CONCURRENTLY IF NOT EXISTS')
}

/**
 * Drops each invalid index of the layout and builds it again, CONCURRENTLY; ORDER_INVALID_OPTIONS when one cannot be built (rows that break a unique index, a role that may
 * not run DDL), saying why, so the layout never counts as current with an index it lacks.
 */
export async function rebuildInvalidIndexes (query: Run, tables: Tables): Promise<void> {
  for (const index of await invalidIndexes(query, tables)) {
    try {
      await query(`DROP INDEX CONCURRENTLY IF EXISTS "${index}"`, [])
      await query(buildOf(tables, index), [])
    } catch (err) {
      throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table "${tables.name}": index "${index}" was left invalid by an interrupted build ` +
        `and could not be built again (${(err as Error).message}); build it as the layout does (postgresSchemaSql) and start again`)
    }
  }
}
