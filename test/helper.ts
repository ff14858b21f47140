// Builds apps for the tests: a Fastify instance with the plugin, and the bodies a client sends.
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import tap, { type Test } from 'tap'
import { orderOf } from '../lib/storage/conformance/fixtures.js'
import orderPlugin, {
  memoryStorage, type CreateOrderInput, type Order, type OrderEvent, type OrderPluginOptions,
  type OrderStorage
} from '../lib/index.js'
import type { TestMysql } from './mysql-helper.js'
import type { TestDatabase } from './postgres-helper.js'

let database: Promise<TestDatabase> | undefined
let mysqlServer: Promise<TestMysql> | undefined

/**
 * The storage of an app whose test names none: the plugin's default; with
 * FASTIFY_ORDER_TEST_STORAGE=postgres a fresh PostgreSQL table (DATABASE_URL, else PGlite), with
 * FASTIFY_ORDER_TEST_STORAGE=mysql a fresh table on the MariaDB or MySQL server of MYSQL_URL, so the
 * route tests check the contract on every storage (`npm run test:postgres`, `npm run test:mysql`).
 */
async function defaultStorage (t: Test): Promise<OrderStorage | undefined> {
  switch (process.env.FASTIFY_ORDER_TEST_STORAGE) {
    case 'postgres':
      database ??= import('./postgres-helper.js').then(({ testDatabase }) => testDatabase(tap))
      return (await database).storage({}, t)
    case 'mysql':
      mysqlServer ??= import('./mysql-helper.js').then(({ testMysql }) => testMysql(tap))
      return (await mysqlServer).storage()
    default:
      return undefined
  }
}

/**
 * How to start a child process that runs lib/ through tsx rather than the test runner's TypeScript loader
 * (a second or two less CPU per process), left out of the coverage: its lib/ would map to other function
 * locations than the runner's, giving one function two records. For children whose code the in-process
 * tests already cover; `env` is the child's environment before the runner's settings are taken out.
 */
export function uncoveredChild (env: NodeJS.ProcessEnv = process.env): { execArgv: string[], env: NodeJS.ProcessEnv } {
  return {
    // Baseline WebAssembly code only: a short process would pay for optimizing PGlite's and never gain from it.
    execArgv: ['--liftoff-only', '--import', 'tsx'],
    env: {
      ...Object.fromEntries(Object.entries(env).filter(([name]) => !/^(NODE_V8_COVERAGE|NODE_OPTIONS|TAP.*)$/.test(name))),
      // What tap's process tracking reads: this process and its children are not measured.
      _TAPJS_PROCESSINFO_COVERAGE_: '0'
    }
  }
}

/** The storage a test's app gets by default, for tests that share one storage between two apps. */
export async function testStorage (t: Test): Promise<OrderStorage> {
  return await defaultStorage(t) ?? memoryStorage()
}

export async function buildApp (t: Test, options: OrderPluginOptions = {}, server: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(server)
  t.teardown(() => app.close())
  const storage = options.storage ?? await defaultStorage(t)
  await app.register(orderPlugin, storage === undefined ? options : { ...options, storage })
  await app.ready()
  return app
}

export function orderBody (overrides: Partial<CreateOrderInput> = {}): CreateOrderInput {
  return {
    customerId: 'cus_42',
    currency: 'EUR',
    items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }],
    metadata: { channel: 'web' },
    ...overrides
  }
}

export async function post (app: FastifyInstance, operation: string, payload?: unknown, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url: `/order/${operation}`, payload: payload as object, headers })
  return { status: response.statusCode, body: response.json(), headers: response.headers }
}

export async function createOrder (app: FastifyInstance, overrides: Partial<CreateOrderInput> = {}): Promise<Order> {
  const { status, body } = await post(app, 'createOrder', orderBody(overrides))
  if (status !== 201) throw new Error(`createOrder answered ${status}: ${JSON.stringify(body)}`)
  return body
}

/** The example servers' storage for tests: in memory, so every test starts empty and leaves nothing. */
export function exampleMemoryStorage () {
  return { storage: memoryStorage(), close: async () => {} }
}

/** An order as the plugin stores it, for tests that talk to a storage directly: the conformance suite's, for customer cus_1. */
export function storedOrder (overrides: Partial<Order> = {}): Order {
  const createdAt = overrides.createdAt ?? '2026-01-01T10:00:00.000Z'
  return orderOf({
    id: randomUUID(),
    customerId: 'cus_1',
    items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }],
    total: 100,
    statusHistory: [{ status: 'pending', at: createdAt }],
    ...overrides
  })
}

// Stores an order with its created event, or replaces it with its statusChanged event, as the plugin would.
export { replaceOrder, storeOrder } from '../lib/storage/conformance/fixtures.js'

/**
 * Reads app.orders' event feed after `after` until it has listed `count` events. A feed may list a
 * change a little after it returns (on PostgreSQL, once older transactions anywhere have ended).
 */
export async function waitForEvents (app: FastifyInstance, count: number, after?: string): Promise<OrderEvent[]> {
  const events: OrderEvent[] = []
  const deadline = Date.now() + 10_000
  while (events.length < count) {
    const { items } = await app.orders.listEvents({ after: events.at(-1)?.id ?? after })
    events.push(...items)
    if (items.length === 0) {
      if (Date.now() > deadline) throw new Error(`the feed listed ${events.length} of ${count} events within 10 s`)
      await new Promise(resolve => setTimeout(resolve, 10))
    }
  }
  return events
}

/** Resolves once `check` returns true; fails after 10 s with `what`. */
export async function eventually (what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** A logger destination that keeps every line, parsed. */
export function logLines () {
  const lines: Array<Record<string, any>> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    }
  })
  return { lines, stream }
}
