// How the PostgreSQL storage talks to its client: one query function, statements named where pg takes them, and text as columns hold it.
import { createHash } from 'node:crypto'
import { turnsByKey } from '../../in-turn.js'

/** What the adapter needs of a client: `pg.Pool`, `pg.Client` and PGlite all have it. */
export interface PostgresClient {
  query: (text: string, params: unknown[]) => Promise<{ rows: any[] }>
}

/** Runs one statement and returns its rows. */
export type Run = <Row>(text: string, params: unknown[]) => Promise<Row[]>

/**
 * Whether `client` takes pg's `{ name, text, values }`: a `pg.Pool` (it counts its connections) or a
 * `pg.Client` (it keeps its connection parameters), a pool's client included. PGlite and other
 * clients do not, and never get a named statement unless the host says so with `prepare: true`.
 */
export function takesNamedStatements (client: PostgresClient): boolean {
  const pg = client as { totalCount?: unknown, connect?: unknown } | undefined
  return (typeof pg?.totalCount === 'number' && typeof pg.connect === 'function') || isPgClient(client)
}

/** A `pg.Client` (a pool's client included): one connection, which runs one statement at a time. */
function isPgClient (client: PostgresClient): boolean {
  const { connectionParameters } = client as { connectionParameters?: unknown }
  return typeof connectionParameters === 'object' && connectionParameters !== null
}

/**
 * The storage's statements on one `pg.Client`: one at a time, each sent once the one before has
 * ended, rather than queued by pg while another runs (deprecated since pg 8.x, gone in pg 9).
 */
const statementTurns = turnsByKey()

/**
 * What a pooler that hands each transaction to any server connection (PgBouncer before 1.21 in
 * transaction mode) answers to named statements: a name parsed on another server connection does not
 * exist on this one (26000), or one parsed by another client already exists here (42P05). Either
 * fails at Parse or Bind, before the statement runs, so it is safe to send again unnamed.
 */
const LOST_STATEMENT = new Set(['26000', '42P05'])

/**
 * Runs statements on `client`; with `prepare`, names each text so a connection parses and plans it
 * once. The first time the server says a named statement was lost, that call is sent again unnamed,
 * and every later one goes unnamed too: the connections sit behind a pooler that does not keep them.
 */
export function runnerOf (client: PostgresClient, prepare: boolean): { query: Run, run: Run } {
  const sendNow = client.query as unknown as (statement: string | object, params?: unknown[]) => Promise<{ rows: any[] }>
  const send = isPgClient(client)
    ? (statement: string | object, params?: unknown[]) => statementTurns(client, () => sendNow.call(client, statement, params))
    : (statement: string | object, params?: unknown[]) => sendNow.call(client, statement, params)
  const query: Run = async <Row>(text: string, params: unknown[]) => (await send(text, params)).rows as Row[]
  if (!prepare) return { query, run: query }
  // A statement's name follows from its text, so every instance and connection agrees on it.
  const names = new Map<string, string>()
  const nameOf = (text: string): string => {
    let name = names.get(text)
    if (name === undefined) names.set(text, name = `fastify_order_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`)
    return name
  }
  let naming = true
  const run: Run = async <Row>(text: string, params: unknown[]) => {
    if (!naming) return query<Row>(text, params)
    try {
      return (await send({ name: nameOf(text), text, values: params })).rows as Row[]
    } catch (err) {
      if (!LOST_STATEMENT.has(String((err as { code?: unknown } | null)?.code))) throw err
      naming = false
      return query<Row>(text, params)
    }
  }
  return { query, run }
}

/**
 * A string as a text column holds it. PostgreSQL text cannot hold NUL or lone surrogates, which a client
 * may send (in a customer id, say); JSON string escaping removes both and is injective, so equality is
 * kept, and it leaves ordinary ids unchanged. Only strings are taken: an id of another type is refused,
 * never coerced into one that names another row.
 */
export function columnText (value: string): string {
  if (typeof value !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof value}`)
  return JSON.stringify(value).slice(1, -1)
}

export function quote (identifier: string): string {
  return `"${identifier}"`
}
