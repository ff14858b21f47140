// Calls on one key (a client) one at a time, in the order made.

/**
 * A queue per key: `inTurn(key, call)` runs `call` once every call made before it on the same key has
 * settled, whether it resolved or rejected. Each queue made by this function is its own, so a call
 * queued in one never waits for a call queued in another on the same key.
 */
export function turnsByKey (): <T>(key: object, call: () => Promise<T>) => Promise<T> {
  const last = new WeakMap<object, Promise<unknown>>()
  return function inTurn<T> (key: object, call: () => Promise<T>): Promise<T> {
    const current = (last.get(key) ?? Promise.resolve()).then(call)
    last.set(key, current.catch(() => {}))
    return current
  }
}
