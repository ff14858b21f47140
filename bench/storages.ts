// The plugin as the benchmark loads it, and the storages it can run on: memory always, PostgreSQL when its adapter is there.
import { existsSync } from 'node:fs'
import type { OrderStorage } from '../lib/index.js'

export type StorageName = 'memory' | 'pglite' | 'postgres'

/**
 * The folder the plugin is loaded from: dist/ (what users run, built by bench/run.ts) unless
 * BENCH_LIB names another one. Loaded by path, so the benchmark type-checks without a build.
 */
const libraryDir = new URL(process.env.BENCH_LIB ?? '../dist/', import.meta.url)

/** The package entry, as `import ... from 'fastify-order'` gives it. */
export async function loadPlugin (): Promise<typeof import('../lib/index.js')> {
  return import(new URL('index.js', libraryDir).href)
}

/** True when lib/storage/postgres.ts is in this checkout. */
export function hasPostgresAdapter (): boolean {
  return existsSync(new URL('../lib/storage/postgres.ts', import.meta.url))
}

type PostgresStorage = (options: { client: unknown, table?: string }) => OrderStorage

// The benchmark's own tables on a server, dropped when it ends, so it never touches an app's orders.
const BENCH_TABLE = 'fastify_order_bench'
// Every table postgresStorage() creates for one table name.
const BENCH_TABLES = ['', '_idempotency_keys', '_events', '_subscriptions'].map(suffix => BENCH_TABLE + suffix).join(', ')

/** The storage by name, and how to release what it holds (a pool, an embedded database). */
export async function openStorage (name: StorageName): Promise<{ storage: OrderStorage, close: () => Promise<void> }> {
  if (name === 'memory') {
    const { memoryStorage } = await loadPlugin()
    return { storage: memoryStorage(), close: async () => {} }
  }
  const { postgresStorage } = await import(new URL('storage/postgres.js', libraryDir).href) as { postgresStorage: PostgresStorage }
  if (name === 'pglite') {
    const pgliteModule = '@electric-sql/pglite'
    const { PGlite } = await import(pgliteModule)
    const client = new PGlite()
    return { storage: postgresStorage({ client }), close: () => client.close() }
  }
  const connectionString = process.env.DATABASE_URL
  if (connectionString === undefined) throw new Error('the postgres storage needs DATABASE_URL')
  const pgModule = 'pg'
  const { default: pg } = await import(pgModule)
  const client = new pg.Pool({ connectionString })
  await client.query(`DROP TABLE IF EXISTS ${BENCH_TABLES}`)
  return {
    storage: postgresStorage({ client, table: BENCH_TABLE }),
    close: async () => {
      await client.query(`DROP TABLE IF EXISTS ${BENCH_TABLES}`)
      await client.end()
    }
  }
}
