// The one place where a storage failure becomes 503 ORDER_STORAGE_UNAVAILABLE: the cause is kept for the log, never sent.
import { codes } from '../errors.js'

type Methods<T> = { [K in keyof T]: T[K] extends (...args: any[]) => Promise<unknown> ? K : never }[keyof T]

/** The error a storage's failure becomes. */
function unavailable (err: unknown): unknown {
  // A transaction the database aborted for losing a race is the caller's conflict, not an outage.
  if (err instanceof codes.ORDER_VERSION_CONFLICT) return err
  // A call the storage cannot make as given (withTransaction with no transaction open) is the host's to fix.
  if (err instanceof codes.ORDER_INVALID_OPTIONS) return err
  return new codes.ORDER_STORAGE_UNAVAILABLE({ cause: err })
}

/** Rejects with what a storage's failure becomes: a handler made once, not on every call. */
function rethrowUnavailable (err: unknown): never {
  throw unavailable(err)
}

/** `storage` whose named methods reject with ORDER_STORAGE_UNAVAILABLE (caused by the failure) when they fail. */
export function unavailableOnFailure<T extends object, K extends Methods<T>> (storage: T, methods: readonly K[]): Pick<T, K> {
  const guarded = {} as Pick<T, K>
  for (const method of methods) guarded[method] = guard(storage, storage[method] as (...args: unknown[]) => Promise<unknown>) as T[K]
  return guarded
}

/**
 * `call` on `storage`, failing as ORDER_STORAGE_UNAVAILABLE: the storage's own promise with a handler
 * of its failure, rather than an async function around it (one promise and one turn less on every
 * call, which the memory storage's requests notice), its arguments passed on as they came (V8 makes
 * that a plain call, where a rest parameter and a spread would make an array each time).
 */
function guard (storage: object, call: (...args: unknown[]) => Promise<unknown>) {
  return function () {
    try {
      return Promise.resolve(call.apply(storage, arguments as unknown as unknown[])).catch(rethrowUnavailable)
    } catch (err) {
      return Promise.reject(unavailable(err))
    }
  }
}
