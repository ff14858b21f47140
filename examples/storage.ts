// The examples' storage: PostgreSQL at DATABASE_URL, or an embedded PGlite database kept on disk.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import type { OrderStorage } from '../lib/index.js'
import { postgresStorage } from '../lib/storage/postgres/postgres-storage.js'

export interface ExampleStorage {
  storage: OrderStorage
  /** Ends the pool, or closes PGlite so its data directory is left consistent, and unlocks it. */
  close: () => Promise<void>
}

/** The file in a data directory naming the process that has it open. */
export const LOCK_FILE = 'example.lock'

/**
 * Locks `directory` for this process, creating it if needed, and says whether it holds a database yet.
 * One process at a time may open a PGlite data directory: a second one is refused with what to do,
 * while a lock left by a process that is gone (killed, crashed) is taken over.
 */
export function lockDataDirectory (directory: string): { created: boolean, unlock: () => void } {
  mkdirSync(directory, { recursive: true })
  const lock = join(directory, LOCK_FILE)
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' })
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const holder = holderOf(lock)
    if (holder !== undefined) {
      throw new Error(`${directory} is open in process ${holder}, and one process at a time may open a PGlite data directory. ` +
        'Stop that process (npm start or npm run example:auth?), or give this one another directory with DATA_DIR, e.g. ' +
        `DATA_DIR=./data-2 npm start. If process ${holder} is no example, delete ${lock}.`)
    }
    // Its holder is gone (killed, crashed): the lock is stale.
    rmSync(lock, { force: true })
  }
  return {
    created: !existsSync(join(directory, 'PG_VERSION')),
    unlock: () => { if (holderOf(lock) === process.pid) rmSync(lock, { force: true }) }
  }
}

/** The live process named in a lock file, or undefined when it names none (gone, or not a pid). */
function holderOf (lock: string): number | undefined {
  let pid: number
  try {
    pid = Number(readFileSync(lock, 'utf8'))
  } catch {
    return undefined
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  try {
    process.kill(pid, 0)
    return pid
  } catch (err) {
    // EPERM: it lives, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined
  }
}

/** A pg.Pool when DATABASE_URL is set; otherwise PGlite in DATA_DIR (default ./data), so orders survive a restart. */
export async function createExampleStorage (env: NodeJS.ProcessEnv = process.env, log?: Pick<FastifyBaseLogger, 'info'>): Promise<ExampleStorage> {
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL })
    // A pooled connection the server drops emits 'error'; the next query reconnects, so it must not crash the process.
    pool.on('error', () => {})
    // prepare: pg parses and plans each of the storage's statements once per connection.
    return { storage: postgresStorage({ client: pool, prepare: true }), close: () => pool.end() }
  }
  const directory = env.DATA_DIR ?? './data'
  const { created, unlock } = lockDataDirectory(directory)
  // Said before the wait: creating the database takes PGlite a while (10 to 20 seconds on a small machine).
  if (created) log?.info(`Creating the embedded database (PGlite) in ${directory}: the first start takes a while`)
  let database: PGlite
  try {
    database = await PGlite.create(directory)
  } catch (err) {
    unlock()
    throw err
  }
  return {
    storage: postgresStorage({ client: database }),
    close: async () => {
      await database.close()
      unlock()
    }
  }
}
