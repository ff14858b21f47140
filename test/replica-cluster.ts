// A real PostgreSQL 15 primary, a hot standby of it (pg_basebackup -R, replay held back) and an unrelated cluster, started once for a test file.
import { execFile } from 'node:child_process'
import { access, appendFile, chown, constants, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

/** Where Debian puts PostgreSQL 15's server programs. */
export const SERVER_BIN = process.env.PG_SERVER_BIN ?? '/usr/lib/postgresql/15/bin'

/** Ports of our own: never the shared server's 5432. */
export const PORTS = { primary: 55432, standby: 55433, other: 55434 } as const

/** Why the cluster cannot be started here, or undefined when it can. */
export async function missingServer (): Promise<string | undefined> {
  for (const program of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) {
    try {
      await access(join(SERVER_BIN, program), constants.X_OK)
    } catch {
      return `PostgreSQL's server program ${program} is not in ${SERVER_BIN}`
    }
  }
  if (process.getuid?.() === 0) {
    try {
      await run('runuser', ['-u', 'postgres', '--', 'true'])
    } catch {
      return 'running as root, and runuser cannot run the server programs as the postgres user'
    }
  }
  return undefined
}

export interface Cluster {
  /** The ports the servers listen on: those of PORTS, unless one was taken. */
  ports: Record<keyof typeof PORTS, number>
  /** A pool on the primary, the standby and the unrelated cluster. */
  /** Its connections stay open until the cluster stops, so their backends' CPU can be read. */
  pool: (server: keyof typeof PORTS, max?: number) => pg.Pool
  /** The pid of a server's postmaster (its first process: every backend is its child). */
  postmasterPid: (server: keyof typeof PORTS) => Promise<number>
  /** Stops the standby at once, as a crash would. */
  killStandby: () => Promise<void>
  stop: () => Promise<void>
}

/**
 * Starts the three servers in a temporary directory (as the postgres user when run as root): small
 * buffers, no fsync, the standby replaying `applyDelay` behind.
 */
export async function startCluster (applyDelay = '500ms'): Promise<Cluster> {
  const root = process.getuid?.() === 0
  const dir = await mkdtemp(join(tmpdir(), 'fastify-order-replicas-'))
  if (root) await chown(dir, Number((await run('id', ['-u', 'postgres'])).stdout), Number((await run('id', ['-g', 'postgres'])).stdout))
  const server = (program: string, args: string[]) => root
    ? run('runuser', ['-u', 'postgres', '--', join(SERVER_BIN, program), ...args], { cwd: dir })
    : run(join(SERVER_BIN, program), args, { cwd: dir })
  const settings = () => [
    "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`, 'shared_buffers = 1MB',
    'fsync = off', 'full_page_writes = off', 'max_connections = 40', 'wal_level = replica', 'max_wal_senders = 4'
  ].join('\n') + '\n'
  const data = (name: string) => join(dir, name)
  // The ports lie in Linux's range of ephemeral ports: on a busy machine an outgoing connection may
  // hold one for a moment, so a start that could not bind is tried again.
  // hold one for a while, so a server that cannot bind its port moves on to the port 10 above, and so on.
  const ports: Record<keyof typeof PORTS, number> = { ...PORTS }
  const start = async (name: keyof typeof PORTS) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await server('pg_ctl', ['-D', data(name), '-l', join(dir, `${name}.log`), '-o', `-p ${ports[name]}`, '-w', 'start'])
      } catch (err) {
        const log = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '')
        if (attempt === 20 || !log.includes('Address already in use')) throw err
        ports[name] += 10
      }
    }
  }
  const pools: pg.Pool[] = []
  const started: string[] = []
  const stop = async () => {
    await Promise.all(pools.splice(0).map(pool => pool.end().catch(() => {})))
    for (const name of started.splice(0)) await server('pg_ctl', ['-D', data(name), '-m', 'immediate', 'stop']).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await Promise.all(['primary', 'other'].map(name => server('initdb', ['-D', data(name), '-A', 'trust', '-U', 'postgres', '--no-sync'])))
    await appendFile(data('primary') + '/postgresql.conf', settings())
    await appendFile(data('other') + '/postgresql.conf', settings())
    await Promise.all((['primary', 'other'] as const).map(async name => { await start(name); started.push(name) }))
    await server('pg_basebackup', ['-h', '127.0.0.1', '-p', String(ports.primary), '-U', 'postgres', '-D', data('standby'), '-R', '-X', 'stream'])
    await appendFile(data('standby') + '/postgresql.conf', `recovery_min_apply_delay = '${applyDelay}'\n`)
    await start('standby')
    started.push('standby')
  } catch (err) {
    // What the server said is in its log, which goes with the directory.
    const logs = await Promise.all(['primary', 'other', 'standby'].map(name => readFile(join(dir, `${name}.log`), 'utf8').catch(() => '')))
    await stop()
    throw new Error(`${(err as Error).message}\n${logs.join('\n')}`)
  }
  return {
    ports,
    pool (name, max = 4) {
      const pool = new pg.Pool({ host: '127.0.0.1', port: ports[name], user: 'postgres', database: 'postgres', max, idleTimeoutMillis: 0 })
      // A pool whose server went away emits its clients' errors: the storage sees them on its next statement.
      pool.on('error', () => {})
      pools.push(pool)
      return pool
    },
    async postmasterPid (name) {
      return Number((await readFile(join(data(name), 'postmaster.pid'), 'utf8')).split('\n')[0])
    },
    async killStandby () {
      await server('pg_ctl', ['-D', data('standby'), '-m', 'immediate', 'stop'])
    },
    stop
  }
}
