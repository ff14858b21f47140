// postgresStorage(): orders in PostgreSQL through pg.Pool, pg.Client or PGlite; atomic by single statements.
import { createHash } from 'node:crypto'
import { codes } from '../errors.js'
import type { OrderEvent } from '../events.js'
import type { Order } from '../schemas.js'
import type { CreateResult, IdempotencyClaim, Lease, OrderStorage, StorageListQuery } from './types.js'

/** What the adapter needs of a client: `pg.Pool`, `pg.Client` and PGlite all have it. */
export interface PostgresClient {
  query: (text: string, params: unknown[]) => Promise<{ rows: any[] }>
}

export interface PostgresStorageOptions {
  /** Runs every statement. A `pg.Pool` lets several statements run at once; each one is atomic alone. */
  client: PostgresClient
  /**
   * Name of the orders table; the idempotency keys live in `<table>_idempotency_keys`, the event feed in
   * `<table>_events`, subscriptions in `<table>_subscriptions`, and indexes are named after it, so two plugins can share one database under two names. Letters, digits and `_`,
   * at most 32 characters. Resolved through the connection's `search_path`. Default: `fastify_orders`.
   */
  table?: string
  /**
   * Names the storage's fixed statements, so that each connection parses and plans each of them once
   * rather than on every call. Needs a client whose `query` also takes pg's `{ name, text, values }`:
   * `pg.Pool` or `pg.Client` (PGlite does not). Default: false.
   */
  prepare?: boolean
}

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/
// Each claimed create deletes at most this many expired keys: the key table cannot outgrow the live keys
// for long, and no statement does unbounded work.
const PURGE_BATCH = 10

function quote (identifier: string): string {
  return `"${identifier}"`
}

/**
 * A string as a text column holds it. PostgreSQL text cannot hold NUL or lone surrogates, which a client
 * may send (in a customer id, say); JSON string escaping removes both and is injective, so equality is
 * kept, and it leaves ordinary ids unchanged.
 */
function columnText (value: string): string {
  return JSON.stringify(value).slice(1, -1)
}

/**
 * The event as its `payload` column holds it, built around the order's JSON rather than serializing
 * the order a second time. The keys are those of OrderEvent, in its order.
 */
function payloadOf (event: OrderEvent, orderJson: string): string {
  const from = event.type === 'statusChanged' ? `,"from":${JSON.stringify(event.from)}` : ''
  return `{"id":"${event.id}","type":"${event.type}","at":"${event.at}","order":${orderJson}${from}}`
}

/** One row of an idempotency lookup: both null unless the key is live and its order stored. */
interface ClaimRow {
  fingerprint: string | null
  document: string | null
}

/**
 * PostgreSQL storage. `init()` creates the tables and indexes when absent (the plugin calls it at register).
 * Every operation is one statement, so several app instances can share a database: creates with an
 * idempotency key claim it and store the order atomically, replaces are compare-and-set on `version`,
 * and every list page is read from an index.
 */
export function postgresStorage (options: PostgresStorageOptions): OrderStorage {
  const { client, table = 'fastify_orders', prepare = false } = options
  if (!TABLE_NAME.test(table)) {
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage table must be 1 to 32 letters, digits or "_", not starting with a digit; got ${JSON.stringify(table)}`)
  }
  const orders = quote(table)
  const keys = quote(`${table}_idempotency_keys`)
  const events = quote(`${table}_events`)
  const subscriptions = quote(`${table}_subscriptions`)
  const indexes = {
    created: quote(`${table}_created_idx`),
    customer: quote(`${table}_customer_created_idx`),
    status: quote(`${table}_status_created_idx`),
    customerStatus: quote(`${table}_customer_status_created_idx`),
    keysExpiry: quote(`${table}_idempotency_keys_expires_idx`),
    feed: quote(`${table}_events_position_idx`)
  }
  const relations = [orders, keys, events, subscriptions, ...Object.values(indexes)]
  // One advisory lock per table name serializes concurrent init() of instances starting together.
  const initLock = createHash('sha256').update(`fastify-order:${table}`).digest().readBigInt64BE(0)

  if (typeof prepare !== 'boolean') {
    throw new codes.ORDER_INVALID_OPTIONS(`postgresStorage prepare must be true (a pg.Pool or pg.Client) or false, got ${JSON.stringify(prepare)}`)
  }
  const query = async <Row>(text: string, params: unknown[]): Promise<Row[]> => (await client.query(text, params)).rows
  // A statement's name follows from its text, so every instance and connection agrees on it.
  const names = new Map<string, string>()
  const nameOf = (text: string): string => {
    let name = names.get(text)
    if (name === undefined) names.set(text, name = `fastify_order_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`)
    return name
  }
  /** A statement whose text never changes: named when `prepare` is set. */
  const run = prepare
    ? async <Row>(text: string, params: unknown[]): Promise<Row[]> =>
      (await (client.query as unknown as (config: object) => Promise<{ rows: Row[] }>)({ name: nameOf(text), text, values: params })).rows
    : query

  // A DO block is one statement: it runs in one transaction on one connection whatever the client,
  // so the advisory lock is held until all of it is committed. When everything exists it runs no DDL:
  // no lock that would queue writers behind it, and no CREATE privilege needed, so the app may run as
  // a role that only reads and writes rows. Text columns use the "C" collation so ids and timestamps
  // order as JavaScript compares strings; created_at is the ISO string itself.
  const createSchema = `DO $fastify_order$ BEGIN
    IF ${relations.map(relation => `to_regclass('${relation}') IS NULL`).join(' OR ')} THEN
      PERFORM pg_advisory_xact_lock(${initLock});
      CREATE TABLE IF NOT EXISTS ${orders} (
        id text COLLATE "C" PRIMARY KEY,
        customer_id text COLLATE "C" NOT NULL,
        status text COLLATE "C" NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        version bigint NOT NULL,
        document json NOT NULL
      );
      CREATE INDEX IF NOT EXISTS ${indexes.created} ON ${orders} (created_at, id);
      CREATE INDEX IF NOT EXISTS ${indexes.customer} ON ${orders} (customer_id, created_at, id);
      CREATE INDEX IF NOT EXISTS ${indexes.status} ON ${orders} (status, created_at, id);
      CREATE INDEX IF NOT EXISTS ${indexes.customerStatus} ON ${orders} (customer_id, status, created_at, id);
      CREATE TABLE IF NOT EXISTS ${keys} (
        key text COLLATE "C" PRIMARY KEY,
        fingerprint json NOT NULL,
        order_id text COLLATE "C" NOT NULL,
        expires_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX IF NOT EXISTS ${indexes.keysExpiry} ON ${keys} (expires_at);
      CREATE TABLE IF NOT EXISTS ${events} (
        id uuid PRIMARY KEY,
        aggregatetype text NOT NULL,
        aggregateid text COLLATE "C" NOT NULL,
        type text NOT NULL,
        payload json NOT NULL,
        at text COLLATE "C" NOT NULL,
        tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
        seq bigint GENERATED ALWAYS AS IDENTITY
      );
      CREATE UNIQUE INDEX IF NOT EXISTS ${indexes.feed} ON ${events} (tx, seq);
      CREATE TABLE IF NOT EXISTS ${subscriptions} (
        name text COLLATE "C" PRIMARY KEY,
        holder text COLLATE "C",
        lease_expires_at timestamptz,
        held_at timestamptz NOT NULL,
        tx xid8 NOT NULL,
        seq bigint NOT NULL,
        last_event_id uuid,
        start_snapshot pg_snapshot
      );
    END IF;
  END $fastify_order$`

  const orderColumns = '(id, customer_id, status, created_at, version, document)'
  const orderValues = '$1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text::json'
  const orderParams = (order: Order, orderJson: string) => [
    columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version, orderJson
  ]
  // The event row of the change that `source` (a CTE returning the order id) stored, from four
  // parameters from `first` on: in the same statement as the change, so both commit or neither does.
  const insertEvent = (source: string, first: number) => `INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
    SELECT $${first}::uuid, 'order', ${source}.id, $${first + 1}::text, $${first + 2}::text::json, $${first + 3}::text FROM ${source}`
  const eventParams = (event: OrderEvent, orderJson: string) => [event.id, event.type, payloadOf(event, orderJson), event.at]

  // The claim of a key that is live at an instant, and its order, as exactly one row.
  const liveClaim = (key: string, instant: string) => `k.fingerprint::text AS fingerprint, o.document::text AS document
    FROM (SELECT 1) AS one
    LEFT JOIN ${keys} AS k ON k.key = ${key}::text AND k.expires_at > ${instant}::text
    LEFT JOIN ${orders} AS o ON o.id = k.order_id`

  // One statement claims the key (new, or expired and taken over), inserts the order only if the claim
  // was made, purges a few expired keys, and otherwise reads the live claim. A claim committed by another
  // instance while this statement waited is not in its snapshot: that shows as a null document.
  const claimAndInsert = `WITH purged AS (
      DELETE FROM ${keys} WHERE key IN (
        SELECT key FROM ${keys} WHERE expires_at <= $4::text AND key <> $7::text
        ORDER BY expires_at LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)
    ), claim AS (
      INSERT INTO ${keys} (key, fingerprint, order_id, expires_at) VALUES ($7::text, $8::text::json, $1::text, $9::text)
      ON CONFLICT (key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at
        WHERE ${keys}.expires_at <= $4::text
      RETURNING order_id
    ), inserted AS (
      INSERT INTO ${orders} ${orderColumns} SELECT ${orderValues} FROM claim RETURNING id
    ), event AS (
      ${insertEvent('inserted', 10)}
    )
    SELECT EXISTS (SELECT 1 FROM inserted) AS created, ${liveClaim('$7', '$4')}`
  const readClaim = `SELECT ${liveClaim('$1', '$2')}`

  const insert = `WITH inserted AS (INSERT INTO ${orders} ${orderColumns} VALUES (${orderValues}) RETURNING id)
    ${insertEvent('inserted', 7)}`

  async function create (order: Order, event: OrderEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
    const orderJson = JSON.stringify(order)
    if (claim === undefined) {
      await run(insert, [...orderParams(order, orderJson), ...eventParams(event, orderJson)])
      return { created: true, order }
    }
    const key = columnText(claim.key)
    const [outcome] = await run<ClaimRow & { created: boolean }>(claimAndInsert, [
      ...orderParams(order, orderJson), key, JSON.stringify(claim.fingerprint), claim.expiresAt, ...eventParams(event, orderJson)
    ])
    if (outcome!.created) return { created: true, order }
    // A fresh statement sees what a concurrent claim committed while the first one waited on it.
    const [live] = outcome!.document === null ? await run<ClaimRow>(readClaim, [key, order.createdAt]) : [outcome!]
    if (live!.document === null) return { created: false, inProgress: true }
    return { created: false, order: JSON.parse(live!.document), fingerprint: JSON.parse(live!.fingerprint!) }
  }

  const getOrder = `SELECT document::text AS document FROM ${orders} WHERE id = $1::text`

  async function get (id: string): Promise<Order | undefined> {
    const [row] = await run<{ document: string }>(getOrder, [columnText(id)])
    return row === undefined ? undefined : JSON.parse(row.document)
  }

  async function list (listQuery: StorageListQuery): Promise<Order[]> {
    const { customerId, statuses, ids, createdFrom, createdTo, after, limit } = listQuery
    const asc = listQuery.order === 'asc'
    const params: unknown[] = []
    const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`
    const conditions: string[] = []
    // The columns an equality fixes lead the index that serves the page: (customer_id?, status?, created_at, id).
    const fixedColumns: string[] = []
    const fixedValues: string[] = []
    if (customerId !== undefined) {
      fixedColumns.push('customer_id')
      fixedValues.push(param(columnText(customerId), 'text'))
    }
    // Statuses without ids: one index walk per status, merged, so a page costs the same however many
    // orders the other statuses hold. With ids, at most 100 orders are read by primary key anyway.
    let wanted: string | undefined
    if (statuses !== undefined) {
      const statusList = param(statuses.map(columnText), 'text[]')
      if (ids === undefined) {
        wanted = statusList
        fixedColumns.push('status')
        fixedValues.push('wanted.status')
      } else {
        conditions.push(`status = ANY(${statusList})`)
      }
    }
    if (ids !== undefined) conditions.push(`id = ANY(${param(ids.map(columnText), 'text[]')})`)

    fixedColumns.forEach((column, index) => conditions.push(`${column} = ${fixedValues[index]}`))

    // The page is a range of that index between two row bounds: the tighter of the cursor and the created
    // range at each end ('' sorts before every id, so (instant, '') bounds the orders created at that
    // instant). Bounds on (created_at, id) position the scan right after the equalities and stop it.
    // The bound the scan starts from is also given on the whole index key, which only the index serving
    // the page matches, so the planner never prefers walking (created_at, id) and filtering. (The end
    // bound is not: on PostgreSQL 15 that made the scan run past it to the end of the equal columns.)
    const lower = after !== undefined && asc && (createdFrom === undefined || after.createdAt >= createdFrom)
      ? { operator: '>', createdAt: after.createdAt, id: after.id }
      : createdFrom === undefined ? undefined : { operator: '>=', createdAt: createdFrom, id: '' }
    const upper = after !== undefined && !asc && (createdTo === undefined || after.createdAt < createdTo)
      ? { operator: '<', createdAt: after.createdAt, id: after.id }
      : createdTo === undefined ? undefined : { operator: '<', createdAt: createdTo, id: '' }
    const start = asc ? lower : upper
    for (const bound of [lower, upper]) {
      if (bound === undefined) continue
      const position = [param(bound.createdAt, 'text'), param(columnText(bound.id), 'text')]
      conditions.push(`(created_at, id) ${bound.operator} (${position.join(', ')})`)
      if (bound === start && fixedColumns.length > 0) {
        conditions.push(`(${[...fixedColumns, 'created_at', 'id'].join(', ')}) ${bound.operator} (${[...fixedValues, ...position].join(', ')})`)
      }
    }
    const direction = asc ? 'ASC' : 'DESC'
    const limitParam = param(limit, 'int')
    const orderBy = (columns: string[]) => `ORDER BY ${columns.map(column => `${column} ${direction}`).join(', ')} LIMIT ${limitParam}`

    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
    const select = `SELECT created_at, id, document::text AS document FROM ${orders} ${where} ${orderBy([...fixedColumns, 'created_at', 'id'])}`
    const text = wanted === undefined
      ? select
      : `SELECT page.document FROM unnest(${wanted}) AS wanted (status) CROSS JOIN LATERAL (${select}) AS page
        ${orderBy(['page.created_at', 'page.id'])}`
    const rows = await query<{ document: string }>(text, params)
    return rows.map(row => JSON.parse(row.document))
  }

  const update = `WITH updated AS (
      UPDATE ${orders} SET ${orderColumns} = (${orderValues}) WHERE id = $1::text AND version = $7::bigint RETURNING id
    )
    ${insertEvent('updated', 8)} RETURNING 1`

  async function replace (order: Order, expectedVersion: number, event: OrderEvent): Promise<boolean> {
    const orderJson = JSON.stringify(order)
    const rows = await run(update, [...orderParams(order, orderJson), expectedVersion, ...eventParams(event, orderJson)])
    return rows.length === 1
  }

  // The feed is read only below the oldest transaction still running anywhere in the database: every
  // event there has committed (or never will), so nothing can later take a place before one listed.
  // Positions are (writing transaction, sequence); the sequence alone commits out of order.
  const readable = 'e.tx < pg_snapshot_xmin(pg_current_snapshot())'
  const firstEvents = `SELECT e.payload::text AS payload FROM ${events} AS e WHERE ${readable} ORDER BY e.tx, e.seq LIMIT $1::int`
  // One row even when the page is empty, so "after is unknown" and "nothing new" are told apart.
  const eventsAfter = `SELECT after.id IS NOT NULL AS found, page.payload FROM (SELECT 1) AS one
    LEFT JOIN ${events} AS after ON after.id = $1::uuid
    LEFT JOIN LATERAL (
      SELECT e.payload::text AS payload, e.tx, e.seq FROM ${events} AS e
      WHERE (e.tx, e.seq) > (after.tx, after.seq) AND ${readable}
      ORDER BY e.tx, e.seq LIMIT $2::int
    ) AS page ON true
    ORDER BY page.tx, page.seq`

  async function listEvents ({ after, limit }: { after?: string, limit: number }): Promise<OrderEvent[] | undefined> {
    if (after === undefined) {
      return (await run<{ payload: string }>(firstEvents, [limit])).map(row => JSON.parse(row.payload))
    }
    const rows = await run<{ found: boolean, payload: string | null }>(eventsAfter, [after, limit])
    if (!rows[0]!.found) return undefined
    return rows[0]!.payload === null ? [] : rows.map(row => JSON.parse(row.payload!))
  }

  // The oldest events in feed order, those among them stored before the cutoff, except what a
  // subscription held since the cutoff has not handled: at most `limit` rows looked at and deleted.
  const purge = `DELETE FROM ${events} WHERE id IN (
      SELECT oldest.id FROM (SELECT id, at, tx, seq FROM ${events} ORDER BY tx, seq LIMIT $2::int) AS oldest
      WHERE oldest.at < $1::text AND NOT EXISTS (
        SELECT 1 FROM ${subscriptions} AS s WHERE s.held_at > $1::timestamptz AND (oldest.tx, oldest.seq) > (s.tx, s.seq)))
    RETURNING 1`

  // Creates the subscription where `from` says (`now`: past every event the current snapshot sees as
  // committed, remembered so that none of them is delivered even if it sorts later), then takes the
  // lease if it is free, lapsed or the holder's own. The database's clock times every lease.
  const lease = `WITH snapshot AS (SELECT pg_current_snapshot() AS snapshot), taken AS (
      INSERT INTO ${subscriptions} AS s (name, holder, lease_expires_at, held_at, tx, seq, start_snapshot)
      SELECT $1::text, $2::text, clock_timestamp() + $3::int * interval '1 millisecond', clock_timestamp(),
        CASE WHEN $4::text = 'now' THEN pg_snapshot_xmin(snapshot) ELSE '0'::xid8 END, -1,
        CASE WHEN $4::text = 'now' THEN snapshot END
      FROM snapshot
      ON CONFLICT (name) DO UPDATE
        SET holder = EXCLUDED.holder, lease_expires_at = EXCLUDED.lease_expires_at, held_at = EXCLUDED.held_at
        WHERE s.holder IS NULL OR s.holder = EXCLUDED.holder OR s.lease_expires_at <= clock_timestamp()
      RETURNING last_event_id
    )
    SELECT EXISTS (SELECT 1 FROM taken) AS held,
      coalesce((SELECT last_event_id FROM taken), (SELECT last_event_id FROM ${subscriptions} WHERE name = $1::text))::text AS "lastEventId"`

  const readSubscription = `SELECT page.payload FROM ${subscriptions} AS s CROSS JOIN LATERAL (
      SELECT e.payload::text AS payload, e.tx, e.seq FROM ${events} AS e
      WHERE (e.tx, e.seq) > (s.tx, s.seq) AND ${readable}
        AND (s.start_snapshot IS NULL OR NOT pg_visible_in_snapshot(e.tx, s.start_snapshot))
      ORDER BY e.tx, e.seq LIMIT $2::int
    ) AS page
    WHERE s.name = $1::text
    ORDER BY page.tx, page.seq`

  // Past the start snapshot's xmax no event can have been visible to it, so it is dropped.
  const checkpoint = `UPDATE ${subscriptions} AS s SET tx = e.tx, seq = e.seq, last_event_id = e.id,
      start_snapshot = CASE WHEN e.tx < pg_snapshot_xmax(s.start_snapshot) THEN s.start_snapshot END
    FROM ${events} AS e
    WHERE s.name = $1::text AND s.holder = $2::text AND s.last_event_id IS NOT DISTINCT FROM $3::uuid AND e.id = $4::uuid
    RETURNING 1`

  const release = `UPDATE ${subscriptions} SET holder = NULL, lease_expires_at = NULL WHERE name = $1::text AND holder = $2::text`

  return {
    init: async () => { await query(createSchema, []) },
    create,
    get,
    list,
    replace,
    listEvents,
    purgeEvents: async (before, limit) => (await run(purge, [before, limit])).length,
    // One row: when another instance created the subscription while this statement ran, not held and
    // no checkpoint yet; the next call sees it.
    lease: async ({ name, holder, ttl, from }) => (await run<Lease>(lease, [name, holder, ttl, from]))[0]!,
    readSubscription: async (name, limit) =>
      (await run<{ payload: string }>(readSubscription, [name, limit])).map(row => JSON.parse(row.payload)),
    checkpoint: async (name, holder, lastEventId, eventId) =>
      (await run(checkpoint, [name, holder, lastEventId, eventId])).length === 1,
    release: async (name, holder) => {
      await run(release, [name, holder])
    }
  }
}
