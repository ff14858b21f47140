// createOrder on PostgreSQL: claims the idempotency key, draws the number and stores the order with its created event, in one statement.
import { eventJson } from '../../../feed/events.js'
import type { NewOrder } from '../../../http/schemas.js'
import { balanceSign } from '../../balance-sign.js'
import type { CreateResult, IdempotencyClaim, NewOrderCreatedEvent, OrdersCapability } from '../../order-storage.js'
import { columnText, type Run } from '../client.js'
import type { Tables } from '../tables.js'
import type { OnWritten } from './replace-order.js'

/** One row of an idempotency lookup: both null unless the key is live and its order stored. */
interface ClaimRow {
  fingerprint: string | null
  document: string | null
}

// Where the event's order goes in its JSON: no event field can hold a NUL, which JSON escapes.
const ORDER = '\u0000order\u0000'

/**
 * The parameters of a new order and its created event, around the number the statement draws: the
 * document is `{"number":` + number + the rest of the order's JSON, and the event's JSON holds the same.
 */
function newOrderParams (order: NewOrder, event: NewOrderCreatedEvent): unknown[] {
  const rest = `,${JSON.stringify(order).slice(1)}`
  const [before, after] = eventJson(event, ORDER).split(ORDER) as [string, string]
  return [
    columnText(order.id), columnText(order.customerId), columnText(order.status), order.createdAt, order.version,
    order.reference === undefined ? null : columnText(order.reference), order.store === undefined ? null : columnText(order.store),
    rest, event.id, before, after, balanceSign(order)
  ]
}

/** Whether `err` is the unique index of (customer, reference, store) refusing a second order. */
function isReferenceTaken (err: unknown, { indexes }: Tables): boolean {
  const { code, constraint } = err as { code?: unknown, constraint?: unknown }
  return code === '23505' && constraint === indexes.storeReference.slice(1, -1)
}

/**
 * createOrder's statement. In the host's transaction (`inTransaction`), a taken reference must not be
 * an error, which would abort that transaction, nor a savepoint's rollback, which would undo what the
 * host sent meanwhile on its connection: the order's insert does nothing instead, and the create
 * removes the claim it made in the same transaction.
 */
export function createOrder (tables: Tables, run: Run, onWritten?: OnWritten, inTransaction = false): OrdersCapability['create'] {
  const { orders, keys, events, numbers } = tables
  // The new order from `source` (a CTE of one row with the claim, or none), numbered by the sequence,
  // and its created event: in one statement, so both commit or neither does, and the number is drawn
  // only when the order is inserted. Returns the number and the writing transaction.
  const insertNumbered = (source: string, onConflict: string) => `numbered AS (
      SELECT nextval('${numbers}') AS number FROM ${source}
    ), inserted AS (
      INSERT INTO ${orders} (id, customer_id, status, created_at, version, reference, store, number, document, balance_sign)
      SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::text, number, ('{"number":' || number || $8::text)::json, $12::smallint FROM numbered
      ${onConflict} RETURNING id, number
    ), event AS (
      INSERT INTO ${events} (id, aggregatetype, aggregateid, type, payload, at)
      SELECT $9::uuid, 'order', id, 'created', ($10::text || '{"number":' || number || $8::text || $11::text)::json, $4::text FROM inserted
      RETURNING tx
    )`
  const written = '(SELECT number::text FROM inserted) AS number, (SELECT tx::text FROM event) AS tx'

  // The claim of a key that is live at an instant, and its order, as exactly one row.
  const liveClaim = (key: string, instant: string) => `k.fingerprint::text AS fingerprint, o.document::text AS document
    FROM (SELECT 1) AS one
    LEFT JOIN ${keys} AS k ON k.key = ${key}::text AND k.expires_at > ${instant}::text
    LEFT JOIN ${orders} AS o ON o.id = k.order_id`

  // One statement claims the key (new, or expired and taken over), inserts the order only if the claim
  // was made, and otherwise reads the live claim. A claim committed by another instance while this
  // statement waited is not in its snapshot: that shows as a null document.
  const claimAndInsert = (onConflict: string) => `WITH claim AS (
      INSERT INTO ${keys} (key, fingerprint, order_id, expires_at) VALUES ($13::text, $14::text::json, $1::text, $15::text)
      ON CONFLICT (key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, order_id = EXCLUDED.order_id, expires_at = EXCLUDED.expires_at
        WHERE ${keys}.expires_at <= $4::text
      RETURNING order_id
    ), ${insertNumbered('claim', onConflict)}
    SELECT ${written}, EXISTS (SELECT 1 FROM claim) AS claimed, ${liveClaim('$13', '$4')}`
  const readClaim = `SELECT ${liveClaim('$1', '$2')}`
  const insert = (onConflict: string) => `WITH ${insertNumbered('(SELECT 1) AS one', onConflict)} SELECT ${written}`
  // With a reference, in the host's transaction: a taken one inserts nothing, without an error.
  const tolerant = inTransaction ? 'ON CONFLICT DO NOTHING' : ''
  const statements = { insert: insert(''), claimAndInsert: claimAndInsert(''), tolerantInsert: insert(tolerant), tolerantClaimAndInsert: claimAndInsert(tolerant) }
  const unclaim = `DELETE FROM ${keys} WHERE key = $1::text AND order_id = $2::text`

  /** The created order with the number the statement drew, reported to `onWritten`. */
  function numbered (order: NewOrder, event: NewOrderCreatedEvent, row: { number: string, tx: string }): CreateResult {
    onWritten?.(event.id, row.tx)
    return { created: true, order: { ...order, number: Number(row.number) } }
  }

  async function insertWith (order: NewOrder, event: NewOrderCreatedEvent, claim?: IdempotencyClaim): Promise<CreateResult> {
    const params = newOrderParams(order, event)
    const tolerate = inTransaction && order.reference !== undefined
    if (claim === undefined) {
      const [row] = await run<{ number: string | null, tx: string }>(tolerate ? statements.tolerantInsert : statements.insert, params)
      return row!.number === null ? { created: false, referenceTaken: true } : numbered(order, event, row as { number: string, tx: string })
    }
    const key = columnText(claim.key)
    const [outcome] = await run<ClaimRow & { number: string | null, tx: string, claimed: boolean }>(tolerate ? statements.tolerantClaimAndInsert : statements.claimAndInsert, [
      ...params, key, JSON.stringify(claim.fingerprint), claim.expiresAt
    ])
    if (outcome!.number !== null) return numbered(order, event, outcome as { number: string, tx: string })
    if (outcome!.claimed) {
      // The claim was made but the reference is taken: nothing of this create may stay.
      await run(unclaim, [key, columnText(order.id)])
      return { created: false, referenceTaken: true }
    }
    // A fresh statement sees what a concurrent claim committed while the first one waited on it.
    const [live] = outcome!.document === null ? await run<ClaimRow>(readClaim, [key, order.createdAt]) : [outcome!]
    if (live!.document === null) return { created: false, inProgress: true }
    return { created: false, order: JSON.parse(live!.document), fingerprint: JSON.parse(live!.fingerprint!) }
  }

  return async function create (order, event, claim) {
    try {
      return await insertWith(order, event, claim)
    } catch (err) {
      // The unique index refused the reference: the statement, claim included, stored nothing.
      if (isReferenceTaken(err, tables)) return { created: false, referenceTaken: true }
      throw err
    }
  }
}
