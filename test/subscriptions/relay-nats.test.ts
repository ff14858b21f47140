// The NATS relay example puts every event into JetStream exactly once: across a NATS outage and a SIGKILL of the relay.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { connect, type NatsConnection, type NatsError } from 'nats'
import pg from 'pg'
import t, { type Test } from 'tap'
import { buildRelay, type NatsTarget } from '../../examples/relay-nats.js'
import { LOCK_FILE } from '../../examples/storage.js'
import type { Order, OrderEvent } from '../../lib/index.js'
import { exampleMemoryStorage, orderBody } from '../helper.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const natsUrl = process.env.NATS_URL ?? ''
// A bounded wait for anything a test waits on: past it, the test fails saying what it waited for.
const PATIENCE = 30_000
// A relay's start, which on PGlite first creates the database: 10 to 20 s alone, more beside other tests.
const START_PATIENCE = 120_000

// A skipped test rather than plan(0): in test/subscriptions.ts this file's tests run among others.
if (natsUrl === '') t.test('the NATS relay', { skip: 'NATS_URL is not set: no NATS server to relay to' }, async () => {})
else relayTests(natsUrl)

function relayTests (natsUrl: string) {
  // Two relay starts, a NATS timeout and a lapsed lease on each storage (about 40 s on PGlite, 20 s on a
  // server): more than tap's default 30 s, with room for a busy machine.
  t.setTimeout(300_000)
  t.test('the relay publishes each event as JSON on <prefix>.<type>, with its id as Nats-Msg-Id', async t => {
    const nats = await natsFor(t, natsUrl)
    const target = { url: natsUrl, ...nats.freshStream() }
    const app = await buildRelay({ logger: false }, target, exampleMemoryStorage())
    t.teardown(() => app.close())
    const created = await app.inject({ method: 'POST', url: '/order/createOrder', payload: orderBody() })
    const { id } = created.json()
    await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id, status: 'paid' } })

    const { items } = await app.orders.listEvents()
    await until(async () => app.orders.subscriptions()[0]!.lastEventId === items[1]!.id, 'the relay checkpoints both events')
    t.equal(await nats.count(target.stream), 2, 'only after the stream has them')
    const messages = await nats.read(target.stream, 2)
    t.same(messages.map(message => message.event), items, 'the stream holds the feed')
    t.same(messages.map(message => message.subject), [`${target.subjectPrefix}.created`, `${target.subjectPrefix}.statusChanged`])
    t.same(messages.map(message => message.msgId), items.map(event => event.id))
  })

  // PGlite in a data directory is what `npm run example:relay` uses by default: after a SIGKILL, PostgreSQL's
  // crash recovery must reopen it. With DATABASE_URL, the same on the server, in a schema of its own.
  const databaseUrl = process.env.DATABASE_URL ?? ''
  t.test('a relay killed mid-stream and started again leaves every event in the stream exactly once (PGlite)', async t => {
    await killAndRestart(t, natsUrl, { DATA_DIR: join(t.testdir(), 'data'), DATABASE_URL: '' })
  })
  if (databaseUrl !== '') {
    t.test('a relay killed mid-stream and started again leaves every event in the stream exactly once (PostgreSQL)', async t => {
      const schema = `relay_${randomBytes(4).toString('hex')}`
      const admin = new pg.Client({ connectionString: databaseUrl })
      await admin.connect()
      t.teardown(async () => {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`)
        await admin.end()
      })
      await admin.query(`CREATE SCHEMA ${schema}`)
      const url = new URL(databaseUrl)
      url.searchParams.set('options', `-c search_path=${schema}`)
      await killAndRestart(t, natsUrl, { DATABASE_URL: url.href })
    })
  }
}

const ORDERS = 100
const MOVES = ['paid', 'shipped']
const EVENTS = ORDERS * (1 + MOVES.length)

/**
 * Orders are written while NATS is unreachable (the relay logs its retries and keeps serving); then
 * NATS answers, and once part of the backlog is in the stream the acknowledgements are held back, so
 * the relay is waiting on a publish the stream already has when it is killed. Started again on the
 * same storage, it republishes that event, which JetStream drops.
 */
async function killAndRestart (t: Test, natsUrl: string, storageEnv: Record<string, string>) {
  const nats = await natsFor(t, natsUrl)
  const { stream, subjectPrefix } = nats.freshStream()
  const proxy = await natsProxy(t, new URL(natsUrl))
  const env = { ...storageEnv, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: subjectPrefix, HOST: '127.0.0.1', PORT: String(await freePort()) }

  const first = await startRelay(t, { ...env, NATS_URL: proxy.url })
  const orders = await writeOrders(env.PORT)
  t.ok(await first.waitForLog(line => line.msg?.includes('failed to handle event') === true && (line.attempts ?? 0) >= 3,
    'the relay retries the first event while NATS is down'), 'the relay logs its retries while NATS is down')
  t.equal(first.process.exitCode, null, 'and keeps running')
  t.equal(await nats.count(stream), 0, 'nothing reached the stream')

  // Once part of the backlog is published, hold the acknowledgements back: the relay is left waiting on
  // an event the stream has, times out and retries it (a copy JetStream drops), and is killed there.
  const heldAt = new Promise<number>(resolve => nats.onPublished(subjectPrefix, EVENTS / 10, () => {
    proxy.holdAcknowledgements()
    resolve(first.lines.length)
  }))
  proxy.open()
  const held = await bounded(heldAt, 'part of the backlog is published')
  const waiting = await first.waitForLog(line => line.msg?.includes('failed to handle event') === true,
    'the relay gives up waiting for an acknowledgement', held)
  t.match(waiting, { err: { message: 'TIMEOUT' } }, 'the relay times out waiting for an acknowledgement')
  await first.kill()
  proxy.close()
  if (storageEnv.DATA_DIR !== undefined) {
    // As after a container restart, the lock names a pid another process has now: PID 1, which started later.
    const startOfPid1 = Number(readFileSync('/proc/1/stat', 'utf8').split(') ')[1]!.split(' ')[19])
    writeFileSync(join(storageEnv.DATA_DIR, LOCK_FILE), `1 ${startOfPid1 - 1}`)
  }
  const published = await nats.count(stream)
  t.ok(published < EVENTS, `the relay was killed mid-stream (${published} of ${EVENTS} events published)`)
  t.equal(waiting.eventId, await nats.eventAt(stream, published), 'waiting on the last event in the stream, which it never checkpointed')

  const second = await startRelay(t, { ...env, NATS_URL: natsUrl })
  await until(async () => await nats.count(stream) === EVENTS, `the stream holds all ${EVENTS} events`, 60_000)
  t.ok(await second.waitForLog(line => line.msg?.includes('already in the stream') === true && line.eventId === waiting.eventId,
    'the restarted relay republishes the event it was killed on'), 'restarted, it republishes that event, and JetStream drops the copy')

  const messages = await nats.read(stream, EVENTS)
  t.equal(messages.length, EVENTS, 'the stream holds every event')
  t.equal(new Set(messages.map(message => message.msgId)).size, EVENTS, 'no event is there twice')
  t.equal(await nats.count(stream), EVENTS, 'and nothing else')
  t.ok(messages.every(({ msgId, subject, event }) => msgId === event.id && subject === `${subjectPrefix}.${event.type}`),
    'each message carries its event id as Nats-Msg-Id, on its type\'s subject')
  const history = new Map<string, string[]>()
  for (const { event } of messages) history.set(event.order.id, [...history.get(event.order.id) ?? [], `${event.type} ${event.order.version}`])
  t.same(new Set(history.keys()), new Set(orders.map(order => order.id)), 'every order is there')
  t.ok([...history.values()].every(events => events.join() === 'created 1,statusChanged 2,statusChanged 3'),
    'each order\'s events are in version order')

  const listed = await post(env.PORT, 'getOrderList', { limit: 100 }) as unknown as { items: Order[] }
  t.equal(listed.items.length, ORDERS, 'the storage reopened after the kill with every order')
  t.equal(await second.stop(), 0, 'SIGTERM closes the relay gracefully')
}

/** Creates the orders and moves each through MOVES over HTTP: EVENTS events in all. */
async function writeOrders (port: string): Promise<Order[]> {
  const orders: Order[] = []
  // Ten clients at a time, each moving its order in turn.
  for (let i = 0; i < ORDERS; i += 10) {
    orders.push(...await Promise.all(Array.from({ length: 10 }, async () => {
      const order = await post(port, 'createOrder', orderBody())
      // The example ships an order only after a paid move that names its payment.
      for (const status of MOVES) await post(port, 'updateOrderStatus', { id: order.id, status, ...(status === 'paid' && { reason: 'payment pi_1' }) })
      return order
    })))
  }
  return orders
}

async function post (port: string, operation: string, body: object): Promise<Order> {
  const response = await fetch(`http://127.0.0.1:${port}/order/${operation}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`${operation} answered ${response.status}: ${await response.text()}`)
  return await response.json() as Order
}

interface LogLine { msg?: string, attempts?: number, eventId?: string, [key: string]: unknown }

interface Relay {
  process: ChildProcess
  /** Its log so far, one object a line. */
  lines: LogLine[]
  /** The first line from the `since`th on that matches, once it is logged. */
  waitForLog: (matches: (line: LogLine) => boolean, what: string, since?: number) => Promise<LogLine>
  kill: () => Promise<void>
  /** SIGTERM; resolves to the exit code. */
  stop: () => Promise<number | null>
}

/** `npm run example:relay` as a child process, listening once this resolves; killed at teardown whatever happens. */
async function startRelay (t: Test, env: Record<string, string>): Promise<Relay> {
  // This process's execArgv: the relay loads lib/ through the test runner's TypeScript loader, so its
  // coverage is counted with the rest (another loader would compile lib/ differently).
  const child = spawn(process.execPath, [...process.execArgv, 'examples/relay-nats.ts'], {
    cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  const kill = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }
  const exited = new Promise<number | null>(resolve => child.once('exit', code => {
    process.off('exit', kill)
    resolve(code)
  }))
  // Killed at teardown, and gone before the test's directory (its PGlite data) is removed; should this
  // process end without a teardown (a tap timeout), killed when it exits.
  t.teardown(async () => {
    kill()
    await exited
  })
  process.once('exit', kill)
  const lines: LogLine[] = []
  const waiters = new Set<() => void>()
  let output = ''
  createInterface({ input: child.stdout! }).on('line', text => {
    output += text + '\n'
    try { lines.push(JSON.parse(text)) } catch {}
    for (const waiter of waiters) waiter()
  })
  child.stderr!.on('data', chunk => { output += String(chunk) })

  const waitForLog = (matches: (line: LogLine) => boolean, what: string, since = 0, patience = PATIENCE) => new Promise<LogLine>((resolve, reject) => {
    const check = () => {
      const line = lines.slice(since).find(matches)
      if (line !== undefined) done(() => resolve(line))
    }
    const timer = setTimeout(() => done(() => reject(new Error(`gave up after ${patience} ms waiting until ${what}; the relay said:\n${output.slice(-4000)}`))), patience)
    const gone = () => done(() => reject(new Error(`the relay exited while waiting until ${what}; it said:\n${output.slice(-4000)}`)))
    const done = (settle: () => void) => {
      clearTimeout(timer)
      waiters.delete(check)
      child.off('exit', gone)
      settle()
    }
    waiters.add(check)
    child.once('exit', gone)
    check()
  })

  await waitForLog(line => line.msg?.startsWith('Server listening') === true, 'it listens', 0, START_PATIENCE)
  return {
    process: child,
    lines,
    waitForLog,
    async kill () {
      child.kill('SIGKILL')
      await exited
    },
    async stop () {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), PATIENCE)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}

/** A connection of the test's own to NATS, with streams of unique names that are deleted at teardown. */
async function natsFor (t: Test, url: string) {
  const connection: NatsConnection = await connect({ servers: url })
  const manager = await connection.jetstreamManager()
  const streams: string[] = []
  t.teardown(async () => {
    for (const stream of streams) await manager.streams.delete(stream).catch(() => {})
    await connection.close()
  })
  return {
    freshStream (): Pick<NatsTarget, 'stream' | 'subjectPrefix'> {
      const name = randomBytes(4).toString('hex')
      streams.push(`RELAY_TEST_${name}`)
      return { stream: `RELAY_TEST_${name}`, subjectPrefix: `relay-test-${name}` }
    },
    /** How many messages the stream holds; 0 before it exists. */
    async count (stream: string): Promise<number> {
      try {
        return (await manager.streams.info(stream)).state.messages
      } catch (err) {
        if ((err as NatsError).api_error?.err_code === 10059) return 0
        throw err
      }
    },
    /** Calls `reached` when the `count`th message is published on `<subjectPrefix>.>`, as it reaches the stream. */
    onPublished (subjectPrefix: string, count: number, reached: () => void) {
      connection.subscribe(`${subjectPrefix}.>`, { max: count, callback: () => { if (--count === 0) reached() } })
    },
    async eventAt (stream: string, seq: number): Promise<string> {
      return (await manager.streams.getMessage(stream, { seq })).json<OrderEvent>().id
    },
    /** Every message of the stream, in stream order, through an ordered consumer. */
    async read (stream: string, expected: number) {
      const consumer = await connection.jetstream().consumers.get(stream)
      const messages = []
      for await (const message of await consumer.fetch({ max_messages: expected, expires: 5_000 })) {
        messages.push({ subject: message.subject, msgId: message.headers?.get('Nats-Msg-Id'), event: message.json<OrderEvent>() })
      }
      return messages
    }
  }
}

/**
 * A TCP proxy in front of the NATS server, closed (nothing listens on its port) until `open`. Holding
 * acknowledgements stops what the server sends, while what the relay sends still goes through.
 */
async function natsProxy (t: Test, upstream: URL) {
  const port = await freePort()
  const sockets = new Set<net.Socket>()
  const upstreams = new Set<net.Socket>()
  let held = false
  const server = net.createServer(client => {
    const nats = net.connect(Number(upstream.port || 4222), upstream.hostname)
    for (const socket of [client, nats]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => { client.destroy(); nats.destroy() })
    }
    upstreams.add(nats)
    client.pipe(nats)
    if (!held) nats.pipe(client)
  })
  const close = () => {
    server.close()
    for (const socket of sockets) socket.destroy()
  }
  t.teardown(close)
  return {
    url: `nats://127.0.0.1:${port}`,
    open: () => { server.listen(port, '127.0.0.1') },
    holdAcknowledgements: () => {
      held = true
      for (const socket of upstreams) socket.unpipe().pause()
    },
    close
  }
}

async function freePort (): Promise<number> {
  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

async function bounded<T> (promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${PATIENCE} ms waiting until ${what}`)), PATIENCE)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function until (condition: () => Promise<boolean>, what: string, patience = PATIENCE): Promise<void> {
  const deadline = Date.now() + patience
  while (!await condition()) {
    if (Date.now() > deadline) throw new Error(`gave up after ${patience} ms waiting until ${what}`)
    await sleep(50)
  }
}
