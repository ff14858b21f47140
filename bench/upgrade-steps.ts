// The time of each statement of the PostgreSQL upgrade steps on a release 0.1 layout holding 1,000,000
// orders and events, on the server at DATABASE_URL. Run by bench/run.ts (`npm run bench -- --only upgrade-steps`).
import pg from 'pg'
import { libraryDir } from './storages.js'

if (process.env.DATABASE_URL === undefined) {
  console.error('The upgrade steps are timed on a PostgreSQL server: set DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test')
  process.exit(1)
}
const { postgresSchemaSql } = await import(new URL('storage/postgres/postgres-storage.js', libraryDir).href) as typeof import('../lib/storage/postgres/postgres-storage.js')
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const table = 'fastify_order_bench_steps'
await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_idempotency_keys, ${table}_events, ${table}_subscriptions, ${table}_finished, ${table}_dead_letters, ${table}_schema CASCADE`)
await pool.query(`DROP FUNCTION IF EXISTS ${table}_epoch`)
const [one, ...rest] = postgresSchemaSql({ table, from: 0 })
for (const statement of one!.statements) await pool.query(statement)
const n = 1_000_000
const t0 = Date.now()
await pool.query(`INSERT INTO ${table} (id, customer_id, status, created_at, version, document)
  SELECT md5(i::text), 'cus_' || (i % 500), 'pending', to_char(timestamp '2020-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1, '{"x":1}' FROM generate_series(1, $1::int) i`, [n])
await pool.query(`INSERT INTO ${table}_events (id, aggregatetype, aggregateid, type, payload, at)
  SELECT gen_random_uuid(), 'order', md5(i::text), 'created', '{"x":1}', '2020-01-01T00:00:00.000Z' FROM generate_series(1, $1::int) i`, [n])
await pool.query(`VACUUM ANALYZE ${table}_events`)
console.log(`Upgrade steps on ${n.toLocaleString('en-US')} orders and events of release 0.1's layout (filled in ${((Date.now() - t0) / 1000).toFixed(0)} s), ms per statement:`)
const REPEAT = '-- Run again until it returns no row.'
const millisSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
for (const step of rest) {
  for (const statement of step.statements) {
    const start = process.hrtime.bigint()
    // A batched backfill runs until it returns no row; each run is its own transaction, so its time is how long it holds its rows.
    let batches = 0
    let longest = 0
    for (;;) {
      const batch = process.hrtime.bigint()
      const { rows } = await pool.query(statement)
      batches++
      longest = Math.max(longest, millisSince(batch))
      if (!statement.startsWith(REPEAT) || rows.length === 0) break
    }
    const runs = batches > 1 ? ` (${batches} statements, the longest ${longest.toFixed(1)} ms)` : ''
    console.log(`  version ${step.version}: ${millisSince(start).toFixed(1)} ms${runs}  ${statement.replace(REPEAT, '').replace(/\s+/g, ' ').trim().slice(0, 100)}`)
  }
}
await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_idempotency_keys, ${table}_events, ${table}_subscriptions, ${table}_finished, ${table}_dead_letters, ${table}_schema CASCADE`)
await pool.query(`DROP FUNCTION IF EXISTS ${table}_epoch`)
await pool.end()
