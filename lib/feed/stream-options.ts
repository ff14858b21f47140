// The `stream` option: checked at register, with its defaults. Another option (the desk) turns the stream on by passing true.
import { stream as limits } from '../limits.js'
import type { OptionChecker } from '../option-checks.js'

/** The `stream` option as an object. */
export interface StreamOptions {
  /** Open streams one instance serves; the next is 503 ORDER_STREAM_FULL with Retry-After. Default: 1000. */
  maxClients?: number
  /** How often the instance's one feed reader looks for events other instances stored, in ms. Default: 500. */
  pollInterval?: number
  /** A comment line on each stream at least this often, in ms (at most 15 000, the default). */
  heartbeatInterval?: number
}

/** The `stream` option checked, with its defaults. */
export type StreamConfig = Required<StreamOptions>

const NAMES = ['maxClients', 'pollInterval', 'heartbeatInterval']

/** Checks the `stream` option (`true` or an object); undefined while it is off. */
export function checkStream (value: unknown, check: OptionChecker): StreamConfig | undefined {
  if (value === undefined || value === false) return undefined
  if (value !== true && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw check.invalid(`stream must be true or an object like { maxClients: 1000 }, got ${JSON.stringify(value)}`)
  }
  const options = value === true ? {} : value as Record<string, unknown>
  const unknown = Object.keys(options).find(name => !NAMES.includes(name))
  if (unknown !== undefined) throw check.invalid(`unknown option "stream.${unknown}"; the options of stream are ${NAMES.join(', ')}`)
  const named = (name: string) => ({ [`stream.${name}`]: options[name] })
  return {
    maxClients: check.integer(named('maxClients'), 'stream.maxClients', { fallback: limits.defaultMaxClients, max: limits.maxMaxClients }),
    pollInterval: check.integer(named('pollInterval'), 'stream.pollInterval', { fallback: limits.defaultPollInterval, max: limits.maxPollInterval, unit: ' ms' }),
    heartbeatInterval: check.integer(named('heartbeatInterval'), 'stream.heartbeatInterval', { fallback: limits.defaultHeartbeat, max: limits.defaultHeartbeat, unit: ' ms' })
  }
}
