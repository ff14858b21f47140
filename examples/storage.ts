// The examples' storage: PostgreSQL at DATABASE_URL, or an embedded PGlite database kept on disk.
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import type { OrderStorage } from '../lib/index.js'
import { postgresStorage } from '../lib/storage/postgres/postgres-storage.js'

export interface ExampleStorage {
  storage: OrderStorage
  /** Ends the pool, or closes PGlite so its data directory is left consistent. */
  close: () => Promise<void>
}

/** A pg.Pool when DATABASE_URL is set; otherwise PGlite in DATA_DIR (default ./data), so orders survive a restart. */
export async function createExampleStorage (env: NodeJS.ProcessEnv = process.env): Promise<ExampleStorage> {
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL })
    // A pooled connection the server drops emits 'error'; the next query reconnects, so it must not crash the process.
    pool.on('error', () => {})
    // prepare: pg parses and plans each of the storage's statements once per connection.
    return { storage: postgresStorage({ client: pool, prepare: true }), close: () => pool.end() }
  }
  // One process at a time may open a PGlite data directory.
  const database = await PGlite.create(env.DATA_DIR ?? './data')
  return { storage: postgresStorage({ client: database }), close: () => database.close() }
}
