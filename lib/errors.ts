// Every error the order module sends, made once with @fastify/error so codes and statuses never drift.
// The named export, not the default: @fastify/error is CommonJS (`export =`), and a default import
// emits declarations that only nodenext can read; a named one reads the same under node16 and bundler.
import { createError } from '@fastify/error'

export const codes = {
  /**
   * A plugin option is wrong (thrown by `register`, by `webhook()` and `postgresStorage()` at the
   * call, or by the storage's `init()` when its tables clash with others), or a call is given or needs
   * what cannot work (`withTransaction` given a pool, or on a storage that cannot join a transaction;
   * `listEvents` on a storage without the feed); never an HTTP answer.
   */
  ORDER_INVALID_OPTIONS: createError('ORDER_INVALID_OPTIONS', 'fastify-order: %s', 500, TypeError),
  ORDER_INVALID_CURSOR: createError('ORDER_INVALID_CURSOR', 'The cursor is malformed or was issued for another filter or order', 400),
  ORDER_INVALID_IDEMPOTENCY_KEY: createError('ORDER_INVALID_IDEMPOTENCY_KEY', 'The Idempotency-Key header must be %s', 400),
  /** An `order-consistency` header (or `app.orders.list`'s `consistency`) not in the form of a token; a token of another database is no error. */
  ORDER_INVALID_CONSISTENCY: createError('ORDER_INVALID_CONSISTENCY', 'The order-consistency header is not a token this service issued', 400),
  ORDER_TOTAL_TOO_LARGE: createError('ORDER_TOTAL_TOO_LARGE', 'The order total exceeds %s minor units', 400),
  ORDER_FORBIDDEN: createError('ORDER_FORBIDDEN', 'Not allowed to %s', 403),
  ORDER_NOT_FOUND: createError('ORDER_NOT_FOUND', 'Order "%s" not found', 404),
  /** The workflow has no such move; the message says where the order may go from its status. */
  ORDER_INVALID_TRANSITION: createError('ORDER_INVALID_TRANSITION', 'Cannot move an order from "%s" to "%s": %s', 409),
  /** A guard of the workflow refused the move for this order: the message is the guard's, meant for the caller. */
  ORDER_TRANSITION_REFUSED: createError('ORDER_TRANSITION_REFUSED', '%s', 409),
  /** An action of a change the order as stored does not allow, or the change guard refused: the message names the action's position and the limit, or is the guard's. */
  ORDER_CHANGE_REFUSED: createError('ORDER_CHANGE_REFUSED', '%s', 409),
  ORDER_VERSION_CONFLICT: createError('ORDER_VERSION_CONFLICT', 'Order "%s" is not at version %s', 409),
  ORDER_IDEMPOTENCY_IN_PROGRESS: createError('ORDER_IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry later', 409),
  /** createOrder with a `reference` the customer already has on another order: nothing was created. The message names no reference, so the log line of the 409 carries none. */
  ORDER_REFERENCE_TAKEN: createError('ORDER_REFERENCE_TAKEN', 'This customer already has an order with this reference', 409),
  ORDER_IDEMPOTENCY_KEY_REUSED: createError('ORDER_IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with another request body', 422),
  ORDER_STORAGE_UNAVAILABLE: createError('ORDER_STORAGE_UNAVAILABLE', 'Order storage is unavailable; retry later', 503),
  /** `GET /order/events` while `stream.maxClients` streams are open on this instance; answered with `Retry-After`. */
  ORDER_STREAM_FULL: createError('ORDER_STREAM_FULL', 'The event stream has %s open connections on this instance; retry later', 503),
  ORDER_INVALID_LISTENER: createError('ORDER_INVALID_LISTENER', 'fastify-order: %s', 500, TypeError),
  /** listEvents' `after` names no event in the feed: unknown, or purged after `eventRetention`. */
  ORDER_EVENT_NOT_FOUND: createError('ORDER_EVENT_NOT_FOUND', 'No event "%s" in the feed: unknown, or older than eventRetention', 404),
  ORDER_INVALID_SUBSCRIPTION: createError('ORDER_INVALID_SUBSCRIPTION', 'fastify-order: %s', 500, TypeError),
  /** A subscription handler call still pending after the subscription's `timeout`: a failed attempt, and the reason its signal aborted. Never an HTTP answer. */
  ORDER_HANDLER_TIMEOUT: createError('ORDER_HANDLER_TIMEOUT', 'timed out after %s ms', 500),
  /** `authorize` (or an app.orders `scope` option) gave something that is not a scope: a host error, which reads and writes nothing. The message names the rule, never a value. */
  ORDER_INVALID_SCOPE: createError('ORDER_INVALID_SCOPE', 'fastify-order: %s gave a scope that breaks a rule: %s', 500),
  /** The database was upgraded by a newer release; this one refuses to write to it. */
  ORDER_SCHEMA_NEWER: createError('ORDER_SCHEMA_NEWER', 'fastify-order: the database tables have layout version %s, newer than version %s that this release knows; run a release of fastify-order that knows it', 500),
  /** The same code and shape as Fastify's own schema errors, for `app.orders` callers. */
  FST_ERR_VALIDATION: createError('FST_ERR_VALIDATION', '%s', 400)
}
