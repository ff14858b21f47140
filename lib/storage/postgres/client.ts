// How the PostgreSQL storage talks to its client: one query function, statements named when asked, and text as columns hold it.
import { createHash } from 'node:crypto'

/** What the adapter needs of a client: `pg.Pool`, `pg.Client` and PGlite all have it. */
export interface PostgresClient {
  query: (text: string, params: unknown[]) => Promise<{ rows: any[] }>
}

/** Runs one statement and returns its rows. */
export type Run = <Row>(text: string, params: unknown[]) => Promise<Row[]>

/** Runs statements on `client`; with `prepare`, names each text so a connection parses and plans it once. */
export function runnerOf (client: PostgresClient, prepare: boolean): { query: Run, run: Run } {
  const query: Run = async <Row>(text: string, params: unknown[]) => (await client.query(text, params)).rows as Row[]
  if (!prepare) return { query, run: query }
  // A statement's name follows from its text, so every instance and connection agrees on it.
  const names = new Map<string, string>()
  const nameOf = (text: string): string => {
    let name = names.get(text)
    if (name === undefined) names.set(text, name = `fastify_order_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`)
    return name
  }
  const named = client.query as unknown as (config: object) => Promise<{ rows: any[] }>
  const run: Run = async <Row>(text: string, params: unknown[]) =>
    (await named.call(client, { name: nameOf(text), text, values: params })).rows as Row[]
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
