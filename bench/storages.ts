// The storages the benchmark can run the plugin on: memory always, PostgreSQL when its adapter is there.
import { existsSync } from 'node:fs'
import { memoryStorage, type OrderStorage } from '../lib/index.js'

export type StorageName = 'memory' | 'pglite' | 'postgres'

// Loaded by path so the benchmark type-checks and runs on a checkout without the adapter.
const POSTGRES_ADAPTER = new URL('../lib/storage/postgres.ts', import.meta.url)

/** True when lib/storage/postgres.ts is in this checkout. */
export function hasPostgresAdapter (): boolean {
  return existsSync(POSTGRES_ADAPTER)
}

type PostgresStorage = (options: { client: unknown }) => OrderStorage

/** The storage by name, and how to release what it holds (a pool, an embedded database). */
export async function openStorage (name: StorageName): Promise<{ storage: OrderStorage, close: () => Promise<void> }> {
  if (name === 'memory') return { storage: memoryStorage(), close: async () => {} }
  const { postgresStorage } = await import(POSTGRES_ADAPTER.href) as { postgresStorage: PostgresStorage }
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
  return { storage: postgresStorage({ client }), close: () => client.end() }
}
