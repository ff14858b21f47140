// A real PgBouncer in transaction pooling mode in front of the server of DATABASE_URL, on a port of its own.
// `tsx test/pgbouncer.ts <command …>` runs a command with DATABASE_URL pointed at one (CI runs the route tests so).
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'

export interface PgBouncer {
  /** DATABASE_URL with PgBouncer's port in place of the server's. */
  url: string
  /** Stops PgBouncer (its connections to the server close with it) and removes its files. */
  stop: () => Promise<void>
}

/** The pgbouncer binary: on PATH, or where Debian installs it (/usr/sbin is not on every user's PATH). */
function binary (): string | undefined {
  return [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin'].map(folder => join(folder, 'pgbouncer')).find(path => {
    try {
      accessSync(path, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** Whether this PgBouncer can track named statements (1.21 and later), and so takes max_prepared_statements. */
function tracksNamedStatements (): boolean {
  const [major = 0, minor = 0] = (/PgBouncer (\d+)\.(\d+)/.exec(execFileSync(binary()!, ['--version'], { encoding: 'utf8' })) ?? []).slice(1).map(Number)
  return major > 1 || (major === 1 && minor >= 21)
}

/** PgBouncer refuses to run as root: then it runs as the postgres user, which Debian's server packages create. */
function runAs (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  return { uid: id('-u'), gid: id('-g') }
}

/** Why PgBouncer cannot be started here, in one line, or undefined when it can. */
export function pgBouncerMissing (): string | undefined {
  if ((process.env.DATABASE_URL ?? '') === '') return 'DATABASE_URL is not set: no PostgreSQL server to put PgBouncer in front of'
  if (binary() === undefined) return 'no pgbouncer binary on PATH or in /usr/sbin (apt-get install pgbouncer)'
  try {
    runAs()
  } catch {
    return 'running as root, and there is no postgres user to run pgbouncer as'
  }
  return undefined
}

async function freePort (): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as net.AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

/**
 * Starts PgBouncer in transaction pooling mode in front of the server `serverUrl` names, with a
 * configuration of its own on a free port: every database of that server, as the URL's user (its
 * password, if any, is how PgBouncer logs in to the server; clients are trusted).
 */
export async function startPgBouncer (serverUrl: string): Promise<PgBouncer> {
  const server = new URL(serverUrl)
  const port = await freePort()
  const folder = mkdtempSync(join(tmpdir(), 'fastify-order-pgbouncer-'))
  const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`
  writeFileSync(join(folder, 'users.txt'), `${quoted(decodeURIComponent(server.username))} ${quoted(decodeURIComponent(server.password))}\n`)
  writeFileSync(join(folder, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${server.hostname.replace(/^\[(.*)\]$/, '$1')} port=${server.port === '' ? 5432 : server.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(folder, 'users.txt')}`,
    'pool_mode = transaction',
    // Named statements lost between server connections, as before 1.21: what the storage must survive.
    ...tracksNamedStatements() ? ['max_prepared_statements = 0'] : [],
    // Room for the tests' pools and the transactions they hold open, well under the server's max_connections.
    'default_pool_size = 20',
    'max_client_conn = 1000',
    'ignore_startup_parameters = extra_float_digits',
    'log_connections = 0',
    'log_disconnections = 0',
    ''
  ].join('\n'))
  const user = runAs()
  if (user !== undefined) {
    for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(folder, file), user.uid, user.gid)
  }
  const child = spawn(binary()!, [join(folder, 'pgbouncer.ini')], { ...user, stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { log = (log + chunk).slice(-4000) })
  const exited = once(child, 'exit')
  // A test process that ends without its teardown (a timeout) takes PgBouncer with it.
  const orphaned = () => {
    child.kill('SIGTERM')
    rmSync(folder, { recursive: true, force: true })
  }
  process.once('exit', orphaned)
  const stop = async () => {
    process.removeListener('exit', orphaned)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
    rmSync(folder, { recursive: true, force: true })
  }
  // Ready once it accepts connections; an exit before that is a configuration it refused.
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null || attempt === 100) {
      await stop()
      throw new Error(`pgbouncer did not start on port ${port}:\n${log}`)
    }
    const accepted = await new Promise<boolean>(resolve => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true) }).on('error', () => resolve(false))
    })
    if (accepted) break
    await sleep(50)
  }
  server.port = String(port)
  server.hostname = '127.0.0.1'
  return { url: server.href, stop }
}

// As a command: runs the rest of the command line with DATABASE_URL pointed at a PgBouncer, and exits with its status.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const missing = pgBouncerMissing()
  if (missing !== undefined) throw new Error(missing)
  const [command, ...args] = process.argv.slice(2)
  if (command === undefined) throw new Error('usage: tsx test/pgbouncer.ts <command> [args…]')
  const pooler = await startPgBouncer(process.env.DATABASE_URL!)
  const run = spawn(command, args, { stdio: 'inherit', env: { ...process.env, DATABASE_URL: pooler.url } })
  const [code, signal] = await once(run, 'exit') as [number | null, string | null]
  await pooler.stop()
  process.exitCode = code ?? (signal === null ? 1 : 128)
}
