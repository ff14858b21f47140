// Failures described without throwing: whatever a handler, a listener or a host's client throws becomes text, a type or a loggable Error.

/** What any failure that cannot be read at all becomes: a revoked Proxy, or a getter that throws on every read. */
const UNREADABLE = 'a value that cannot be read was thrown (a revoked Proxy, or a getter that throws)'

/** The type of a value, as a description names it: never the value. */
function typeOf (value: unknown): string {
  return value === null ? 'null' : typeof value
}

function describeValue (thrown: unknown): string {
  if (typeof thrown === 'string') return thrown
  if (thrown instanceof Error) {
    const message: unknown = thrown.message
    // `Object.assign(new Error(), await response.json())` makes a message of anything the body held.
    return typeof message === 'string' ? message : `an Error was thrown whose message is ${typeOf(message)}, not a string`
  }
  let json: string | undefined
  try {
    json = JSON.stringify(thrown)
  } catch {}
  const type = thrown === null || thrown === undefined ? String(thrown) : typeof thrown === 'object' ? 'an object' : `a ${typeof thrown}`
  return typeof json !== 'string' || json === 'null' ? `${type} was thrown` : `${type} was thrown: ${json.slice(0, 200)}`
}

/**
 * A readable description of anything thrown: an Error's message, a string, or the type and JSON of
 * another value (an object without a prototype has no toString to call). Never throws: an Error whose
 * `message` is not a string or whose getter throws, and a revoked Proxy, are described too.
 */
export function describeFailure (thrown: unknown): string {
  try {
    return describeValue(thrown)
  } catch {
    return UNREADABLE
  }
}

/**
 * What `error.type` says of a thrown value: its code (every error of this plugin and of Fastify has
 * one), else its constructor's name, else `unknown`. Never its message, which may hold a client's
 * values; never throws.
 */
export function failureType (thrown: unknown): string {
  try {
    if (thrown === null || thrown === undefined) return 'unknown'
    const code = (thrown as { code?: unknown }).code
    if ((typeof code === 'string' && code !== '') || typeof code === 'number') return String(code)
    const name: unknown = (thrown as { constructor?: { name?: unknown } }).constructor?.name
    return typeof name === 'string' && name !== '' ? name : 'unknown'
  } catch {
    // A proxy or a getter that throws tells nothing more.
    return 'unknown'
  }
}

/**
 * Whether a log serializer can read `error` as it reads an Error (its message, stack and every
 * enumerable property, nested errors included) without a getter throwing or a message that is no string.
 */
function readable (error: unknown, depth: number): boolean {
  if (!(error instanceof Error) || typeof error.message !== 'string') return false
  const stack: unknown = error.stack
  if (stack !== undefined && typeof stack !== 'string') return false
  for (const key in error) {
    const value: unknown = (error as unknown as Record<string, unknown>)[key]
    if (value instanceof Error && (depth === 0 || !readable(value, depth - 1))) return false
  }
  const cause: unknown = error.cause
  return !(cause instanceof Error) || (depth > 0 && readable(cause, depth - 1))
}

/**
 * The failure to log as `err`: the thrown Error itself when a logger can read it, else an Error
 * carrying its description, so a log line never throws (pino's serializer reads `message` and every
 * property) and never loses the failure.
 */
export function loggableFailure (thrown: unknown): Error {
  try {
    if (readable(thrown, 3)) return thrown as Error
  } catch {}
  return new Error(describeFailure(thrown))
}
