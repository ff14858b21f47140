// Databases for the PostgreSQL tests: the server of DATABASE_URL when set, otherwise an in-memory PGlite.
import { randomBytes } from 'node:crypto'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import pg from 'pg'
import type { Test } from 'tap'
import { freshPGlite } from './pglite.js'
import type { TransactionRunner } from '../lib/storage/conformance/run-conformance.js'
import { postgresStorage, type PostgresClient, type PostgresStorageOptions } from '../lib/storage/postgres/postgres-storage.js'
import { tablesOf } from '../lib/storage/postgres/tables.js'

export { freshPGlite }

export interface TestDatabase {
  /** True on a PostgreSQL server (DATABASE_URL), false on PGlite. */
  server: boolean
  /** A client of the database. */
  client: PostgresClient
  /** Another client of the same database, as a second app instance would have: a new pool on a server, the same PGlite. */
  connect: () => PostgresClient
  /** A client on one connection of its own, for session settings such as SET ROLE: a pg.Client on a server, the same PGlite. */
  session: () => Promise<PostgresClient>
  /**
   * Runs `work` on a client inside a transaction that stays open, still running, until `commit` is
   * called: a session of its own on a server; on PGlite, a prepared transaction.
   */
  openTransaction: (work: (client: PostgresClient) => Promise<void>) => Promise<{ commit: () => Promise<void> }>
  /** A table name no other test uses; its tables are dropped at teardown. */
  freshTable: () => string
  /** Runs work in a transaction as a host opens one (BEGIN … COMMIT on a pooled client, or PGlite's transaction()): the conformance suite's runner. */
  transaction: TransactionRunner
  /**
   * A fresh, empty, initialised storage on a table of its own: the factory the conformance suite takes.
   * Given the test that uses it, its tables are emptied once that test has ended and go to a later test
   * that asks, instead of a new set: creating one takes some 70 statements, emptying one a few.
   */
  storage: (options?: Partial<PostgresStorageOptions>, owner?: Test) => Promise<ReturnType<typeof postgresStorage>>
}

/** Drops every relation a storage made for `table`. */
export async function dropTables (client: PostgresClient, table: string): Promise<void> {
  const suffixes = ['', '_idempotency_keys', '_events', '_subscriptions', '_finished', '_dead_letters', '_schema']
  await client.query(`DROP TABLE IF EXISTS ${suffixes.map(suffix => `"${table}${suffix}"`).join(', ')}`, [])
  await client.query(`DROP FUNCTION IF EXISTS "${table}_epoch"()`, [])
}

/** The PGlite the test files of this process share, and how many of them are still using it. */
let shared: { users: number, lite: Promise<PGlite> } | undefined

/**
 * One database per test file, closed when `t` ends: the server `url` names (default DATABASE_URL), else a
 * PGlite, which prepared transactions let leave a transaction running as another client would.
 */
export async function testDatabase (t: Test, url = process.env.DATABASE_URL): Promise<TestDatabase> {
  const closers: Array<() => Promise<void>> = []
  const tables: string[] = []
  let client: PostgresClient
  let connect: () => PostgresClient
  let session: () => Promise<PostgresClient>
  if (url === undefined || url === '') {
    // One PGlite for every test file of a process (test/adapter.postgres.ts runs a folder's files in one),
    // each on tables of its own; closed when the last of them ends.
    shared ??= { users: 0, lite: freshPGlite({ startParams: [...PGlite.defaultStartParams, '-c', 'max_prepared_transactions=4'] }) }
    const own = shared
    own.users++
    const lite = await own.lite
    closers.push(async () => {
      if (--own.users > 0) return
      if (shared === own) shared = undefined
      await lite.close()
    })
    client = lite
    connect = () => lite
    session = async () => lite
  } else {
    connect = () => {
      const pool = new pg.Pool({ connectionString: url, max: 4 })
      closers.push(() => pool.end())
      return pool
    }
    client = connect()
    session = async () => {
      const single = new pg.Client({ connectionString: url })
      await single.connect()
      closers.push(() => single.end())
      return single
    }
  }
  // A prefix per file run, so test files running at once on one server never meet.
  const prefix = `fo_${randomBytes(4).toString('hex')}`
  t.teardown(async () => {
    for (const table of tables) {
      await dropTables(client, table)
    }
    // The first client closes last: it dropped the tables.
    for (const close of closers.reverse()) await close()
  })
  const freshTable = () => {
    const table = `${prefix}_${tables.length}`
    tables.push(table)
    return table
  }
  // Tables of tests that have ended, emptied before their next use, when no test can be using them still.
  const ended: string[] = []
  const spare: string[] = []
  async function emptied (): Promise<string | undefined> {
    for (const table of ended.splice(0)) {
      const { orders, keys, events, subscriptions, finished, deadLetters, schema, numbers } = tablesOf(table)
      for (const relation of [orders, keys, events, subscriptions, finished, deadLetters]) await client.query(`DELETE FROM ${relation}`, [])
      await client.query(`SELECT setval('${numbers}', 1, false)`, [])
      await client.query(`UPDATE ${schema} SET epoch = 1`, [])
      spare.push(table)
    }
    return spare.pop()
  }
  let prepared = 0
  async function openTransaction (work: (client: PostgresClient) => Promise<void>) {
    const own = await session()
    await own.query('BEGIN', [])
    await work(own)
    if (own !== client) return { commit: async () => { await own.query('COMMIT', []) } }
    const name = `${prefix}_${prepared++}`
    await own.query(`PREPARE TRANSACTION '${name}'`, [])
    return { commit: async () => { await own.query(`COMMIT PREPARED '${name}'`, []) } }
  }
  const transaction: TransactionRunner = async (work, commit) => {
    if (!(client instanceof pg.Pool)) {
      await (client as PGlite).transaction(async (tx: Transaction) => {
        await work(tx)
        if (!commit) await tx.rollback()
      })
      return
    }
    const pooled = await client.connect()
    try {
      await pooled.query('BEGIN')
      await work(pooled)
      await pooled.query(commit ? 'COMMIT' : 'ROLLBACK')
    } finally {
      pooled.release()
    }
  }
  return {
    server: url !== undefined && url !== '',
    transaction,
    client,
    connect,
    session,
    openTransaction,
    freshTable,
    async storage (options = {}, owner) {
      const reused = owner !== undefined && options.table === undefined ? await emptied() : undefined
      const table = reused ?? freshTable()
      if (owner !== undefined && options.table === undefined) owner.teardown(() => { ended.push(table) })
      const storage = postgresStorage({ client, table, ...options })
      if (reused === undefined) await storage.init!()
      return storage
    }
  }
}

/** The plan of the one statement that `run` sends through the client it is given, as EXPLAIN (FORMAT JSON) shows it. */
export async function planOf (client: PostgresClient, run: (recording: PostgresClient) => Promise<unknown>): Promise<any> {
  const statements: Array<{ text: string, params: unknown[] }> = []
  await run({
    query: async (text, params) => {
      statements.push({ text, params })
      return client.query(text, params)
    }
  })
  const [{ text, params }] = statements as [{ text: string, params: unknown[] }]
  const [{ 'QUERY PLAN': [explained] }] = (await client.query(`EXPLAIN (FORMAT JSON) ${text}`, params)).rows
  return explained.Plan
}
