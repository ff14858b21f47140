// The one place where a storage failure becomes 503 ORDER_STORAGE_UNAVAILABLE: the cause is kept for the log, never sent.
import { codes } from '../errors.js'

type Methods<T> = { [K in keyof T]: T[K] extends (...args: any[]) => Promise<unknown> ? K : never }[keyof T]

/** `storage` whose named methods reject with ORDER_STORAGE_UNAVAILABLE (caused by the failure) when they fail. */
export function unavailableOnFailure<T extends object, K extends Methods<T>> (storage: T, methods: readonly K[]): Pick<T, K> {
  const guarded = {} as Pick<T, K>
  for (const method of methods) {
    const call = (storage[method] as (...args: unknown[]) => Promise<unknown>).bind(storage)
    guarded[method] = (async (...args: unknown[]) => {
      try {
        return await call(...args)
      } catch (err) {
        // A transaction the database aborted for losing a race is the caller's conflict, not an outage.
        if (err instanceof codes.ORDER_VERSION_CONFLICT) throw err
        // A call the storage cannot make as given (withTransaction with no transaction open) is the host's to fix.
        if (err instanceof codes.ORDER_INVALID_OPTIONS) throw err
        throw new codes.ORDER_STORAGE_UNAVAILABLE({ cause: err })
      }
    }) as T[K]
  }
  return guarded
}
