// Idempotency keys: the header's rule, the fingerprint a key is bound to, the claim a create stores, and a replay's answer.
import { createHash } from 'node:crypto'
import { codes } from '../errors.js'
import { IdempotencyKeySchema, type ChangeOrderInput, type Order, type CreateOrderInput } from '../http/schemas.js'
import type { OrderScope } from './scope.js'
import type { CreateResult, IdempotencyClaim } from '../storage/order-storage.js'

/** The Idempotency-Key header's rule in words, for its error and its documentation. */
export const IDEMPOTENCY_KEY_RULE = `1 to ${IdempotencyKeySchema.maxLength} visible ASCII characters`

const IDEMPOTENCY_KEY = new RegExp(IdempotencyKeySchema.pattern!)

/** Throws ORDER_INVALID_IDEMPOTENCY_KEY unless the key keeps the header's schema. */
export function checkIdempotencyKey (key: string): void {
  if (key.length > IdempotencyKeySchema.maxLength! || !IDEMPOTENCY_KEY.test(key)) throw new codes.ORDER_INVALID_IDEMPOTENCY_KEY(IDEMPOTENCY_KEY_RULE)
}

/**
 * The body of a create as the server will store it; also what an idempotency key is bound to.
 * `customFields` is the canonical JSON of the body's custom fields, '' when it has none. A body without
 * custom fields, a reference or a store keeps the fingerprint it had before any existed, so stored keys
 * stay valid. Only the body is read: a store the scope gives is not in it (the claim is scoped by it).
 */
export function fingerprintOf (input: CreateOrderInput, customFields = ''): string {
  const metadata = input.metadata === undefined ? [] : Object.entries(input.metadata).sort(([a], [b]) => a < b ? -1 : 1)
  const items = input.items.map(({ sku, name, quantity, unitPrice }) => [sku, name ?? null, quantity, unitPrice])
  const fields: unknown[] = [input.customerId, input.currency, items, metadata]
  if (input.reference !== undefined) fields.push(input.reference)
  // An object, so that a store is never taken for a reference of the same spelling.
  if (input.store !== undefined) fields.push({ store: input.store })
  return createHash('sha256')
    .update(JSON.stringify(fields) + customFields)
    .digest('base64url')
}

/** JSON with every object's keys sorted, so two spellings of one value read the same. */
function canonicalJson (value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const keys = Object.keys(value).sort()
  return `{${keys.map(key => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`
}

/** The body of a change, bound to its idempotency key: a preview stores no key, so `preview` is not in it. */
export function changeFingerprintOf ({ id, actions, expectedVersion, reason }: ChangeOrderInput): string {
  return createHash('sha256')
    .update(canonicalJson([id, actions, expectedVersion ?? null, reason ?? null]))
    .digest('base64url')
}

/**
 * The claim of a key under a scope: the same client key under two customers or two stores gives two
 * claims, under two actors one. A scope without a store keeps the claim key it had before stores existed.
 * A change's claim key starts with `change`, where a create's starts with `[`: the two never meet.
 */
export function claimOf (key: string, scope: OrderScope | undefined, fingerprint: string, expiresAt: string, of: 'create' | 'change' = 'create'): IdempotencyClaim {
  const scoped = [scope?.customerId ?? null, key]
  if (scope?.store !== undefined) scoped.push(scope.store)
  return { key: (of === 'change' ? 'change' : '') + JSON.stringify(scoped), fingerprint, expiresAt }
}

/** The first order of a key that was claimed already, or the error that says why it cannot be returned. */
export function replayOf (result: Exclude<CreateResult, { created: true } | { referenceTaken: true }>, claim: IdempotencyClaim): Order {
  if ('inProgress' in result) throw new codes.ORDER_IDEMPOTENCY_IN_PROGRESS()
  if (result.fingerprint !== claim.fingerprint) throw new codes.ORDER_IDEMPOTENCY_KEY_REUSED()
  return result.order
}
