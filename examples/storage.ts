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

/** The file in a data directory naming the process that has it open: its pid and, on Linux, its start. */
export const LOCK_FILE = 'example.lock'

/**
 * Locks `directory` for this process, creating it if needed, and says whether it holds a database yet.
 * One process at a time may open a PGlite data directory: a second one is refused with what to do,
 * while a lock whose holder is gone is taken over: killed or crashed, a zombie not yet reaped, or its
 * pid given since to another process (after a container restart, often PID 1 or this process itself).
 */
export function lockDataDirectory (directory: string): { created: boolean, unlock: () => void } {
  mkdirSync(directory, { recursive: true })
  const lock = join(directory, LOCK_FILE)
  const self = holderLine(process.pid)
  for (;;) {
    try {
      writeFileSync(lock, self, { flag: 'wx' })
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
    // Its holder is gone: the lock is stale.
    rmSync(lock, { force: true })
  }
  return {
    created: !existsSync(join(directory, 'PG_VERSION')),
    unlock: () => { if (holderOf(lock) === process.pid) rmSync(lock, { force: true }) }
  }
}

// The kernel's flag of a process in its exit (killed, freeing its memory), in /proc/<pid>/stat's flags.
const PF_EXITING = 0x4
// Signal 9 in the pending masks of /proc/<pid>/status.
const SIGKILL_BIT = 1n << 8n

/**
 * What Linux tells of a process (`/proc/<pid>/stat`): whether it is gone already (exiting, or a zombie
 * not yet reaped) and its start, in clock ticks after boot, which with the pid names one process for good.
 * Undefined when there is no such process, or no /proc to ask (macOS).
 */
function processStat (pid: number): { ending: boolean, start: string } | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may hold spaces: the fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { ending: fields[0] === 'Z' || fields[0] === 'X' || (Number(fields[6]) & PF_EXITING) !== 0 || killPending(pid), start: fields[19]! }
}

/** Whether a SIGKILL waits for the process, which a busy machine may not have scheduled yet to act on it. */
function killPending (pid: number): boolean {
  try {
    const pending = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^(ShdPnd|SigPnd):\s*[0-9a-f]+$/gm) ?? []
    return pending.some(line => (BigInt(`0x${line.split(/\s+/)[1]!}`) & SIGKILL_BIT) !== 0n)
  } catch {
    return true
  }
}

/** The lock file's line for process `pid`: "<pid> <start>", or "<pid>" where the start cannot be read. */
function holderLine (pid: number): string {
  const start = processStat(pid)?.start
  return start === undefined ? String(pid) : `${pid} ${start}`
}

/**
 * The live process named in a lock file, or undefined when it names none: gone, exiting, a zombie, another
 * process than the one that wrote it (its start differs), or no pid. Without /proc, a pid that answers
 * signals counts as the holder.
 */
function holderOf (lock: string): number | undefined {
  let line: string
  try {
    line = readFileSync(lock, 'utf8')
  } catch {
    return undefined
  }
  const [written = '', start] = line.trim().split(' ')
  const pid = Number(written)
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  if (existsSync('/proc/self/stat')) {
    const stat = processStat(pid)
    return stat !== undefined && !stat.ending && stat.start === start ? pid : undefined
  }
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
