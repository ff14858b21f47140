// The one option checker: register, subscribe, webhook() and postgresStorage read their options through it, so every message names the option and its limit alike.

export interface IntegerRule {
  /** The value when the option is absent (undefined). */
  fallback: number
  /** Default 1. */
  min?: number
  max: number
  /** What the number counts, shown after the limit: ' ms', ' bytes', ' ms (100 years)'. */
  unit?: string
}

export interface OptionChecker {
  /** The error of this owner, with `message` after its prefix. */
  invalid: (message: string) => Error
  /** Throws for an options value that is not an object, and for a key not among `names` (or `also`, accepted unchecked). */
  known: (options: unknown, names: readonly string[], example: string, also?: readonly string[]) => Record<string, unknown>
  /** The option as an integer within the rule's bounds, or its fallback when absent. */
  integer: (options: Record<string, unknown>, name: string, rule: IntegerRule) => number
  /** The option as an array of at most `maxLength` integers, each within the rule's bounds. */
  integers: (options: Record<string, unknown>, name: string, rule: Omit<IntegerRule, 'fallback'> & { maxLength: number }) => number[]
  /** The option as one of `values`, or `fallback` when absent. */
  oneOf: <T>(options: Record<string, unknown>, name: string, values: readonly T[], fallback: T) => T
  /** The option as a function, or undefined when absent; `shape` says what it is called with. */
  func: <T>(options: Record<string, unknown>, name: string, shape: string) => T | undefined
}

const shown = (value: unknown) => typeof value === 'number' ? String(value) : JSON.stringify(value)

/** The checker of one owner: `prefix` starts each message ('' for register, 'subscribe: ', 'webhook: ' ...). */
export function optionChecker (prefix: string, OptionError: new (message: string) => Error): OptionChecker {
  const invalid = (message: string) => new OptionError(`${prefix}${message}`)
  return {
    invalid,
    known (options, names, example, also = []) {
      if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid(`options must be an object like ${example}`)
      for (const name of Object.keys(options)) {
        if (!names.includes(name) && !also.includes(name)) throw invalid(`unknown option "${name}"; the options are ${names.join(', ')}`)
      }
      return options as Record<string, unknown>
    },
    integer (options, name, { fallback, min = 1, max, unit = '' }) {
      const value = options[name] ?? fallback
      if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
        throw invalid(`${name} must be an integer from ${min} to ${max}${unit}, got ${shown(value)}`)
      }
      return value as number
    },
    integers (options, name, { min = 1, max, maxLength, unit = '' }) {
      const value = options[name]
      const rule = `${name} must be an array of at most ${maxLength} integers from ${min} to ${max}${unit}`
      if (!Array.isArray(value)) throw invalid(`${rule}, got ${shown(value)}`)
      if (value.length > maxLength) throw invalid(`${rule}, got ${value.length} of them`)
      const bad = value.findIndex(item => !Number.isSafeInteger(item) || item < min || item > max)
      if (bad >= 0) throw invalid(`${rule}, got ${shown(value[bad])} at index ${bad}`)
      return [...value]
    },
    oneOf (options, name, values, fallback) {
      const value = options[name] ?? fallback
      if (!values.includes(value as never)) throw invalid(`${name} must be ${values.map(shown).join(' or ')}, got ${shown(value)}`)
      return value as typeof fallback
    },
    func<T>(options: Record<string, unknown>, name: string, shape: string) {
      const value = options[name]
      if (value !== undefined && typeof value !== 'function') throw invalid(`${name} must be a function ${shape}`)
      return value as T | undefined
    }
  }
}
