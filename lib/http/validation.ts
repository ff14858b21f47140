// Strict schema validation, the same for the routes and app.orders whatever the host's ajv options.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'
import { codes } from '../errors.js'
import { compiledOnce } from './compiled-once.js'

// ajv-formats is CommonJS: under nodenext its default import is the module, whose `default` is the plugin.
const addFormats = ajvFormats.default

export type Validate = ValidateFunction

/**
 * An Ajv that never coerces, never drops unknown properties and never fills defaults in. It knows
 * every ajv-formats format, as Fastify's own validator does, for the host's custom field schemas.
 */
export function createAjv (): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: false,
    allErrors: false,
    strictTypes: false,
    // A change's actions are a oneOf told apart by `type`.
    discriminator: true
  })
  addFormats(ajv)
  // Every validator it compiles words its errors to say what is allowed, for the routes and app.orders alike.
  const compile = ajv.compile.bind(ajv)
  ajv.compile = ((schema: object) => readable(compile(schema))) as Ajv['compile']
  return ajv
}

/** A value as a list of allowed values shows it: a string as it is, anything else as JSON. */
const shown = (value: unknown) => typeof value === 'string' ? value : JSON.stringify(value)

/** An error worded to say what is allowed: the unknown property by name, the allowed values of an enum. */
function worded (error: ErrorObject): ErrorObject {
  if (error.keyword === 'additionalProperties') return { ...error, message: `must NOT have additional property ${JSON.stringify(error.params.additionalProperty)}` }
  if (error.keyword === 'enum') return { ...error, message: `must be one of: ${(error.params.allowedValues as unknown[]).map(shown).join(', ')}` }
  return error
}

/**
 * One error for a value that matches no member of an `anyOf`, rather than one per member and one for
 * the anyOf: the errors of the members whose type the value has (a status that is a string but not
 * one of the statuses: "must be one of: …"), or, when it has none of their types, which types it may have.
 */
function collapsed (anyOf: ErrorObject, members: ErrorObject[]): ErrorObject[] {
  const wrongType = (error: ErrorObject) => error.keyword === 'type' && error.instancePath === anyOf.instancePath
  const memberOf = (error: ErrorObject) => error.schemaPath.slice(anyOf.schemaPath.length + 1).split('/')[0]
  const wrongTypes = new Set(members.filter(wrongType).map(memberOf))
  const fitting = members.filter(error => !wrongTypes.has(memberOf(error)))
  if (fitting.length === 0) {
    const types = [...new Set(members.filter(wrongType).flatMap(error => error.params.type as string | string[]))]
    return [{ ...anyOf, message: `must be ${types.join(' or ')}` }]
  }
  // Several fitting members that each allow a list of values: the value must be one of them all.
  if (fitting.every(error => error.keyword === 'enum' && error.instancePath === anyOf.instancePath)) {
    return [{ ...fitting[0]!, message: `must be one of: ${fitting.flatMap(error => error.params.allowedValues as unknown[]).map(shown).join(', ')}` }]
  }
  const first = memberOf(fitting[0]!)
  return fitting.filter(error => memberOf(error) === first)
}

/** The errors as a reader wants them: worded, and an anyOf's collapsed into the ones that say what to fix. */
function readableErrors (errors: readonly ErrorObject[]): ErrorObject[] {
  const result: ErrorObject[] = []
  for (const error of errors) {
    if (error.keyword !== 'anyOf') {
      result.push(worded(error))
      continue
    }
    // An anyOf fails only after each member did: its error follows theirs (already worded, and collapsed where nested).
    const inside = `${error.schemaPath}/`
    const members = result.splice(result.findIndex(member => member.schemaPath.startsWith(inside)))
    result.push(...collapsed(error, members))
  }
  return result
}

let sharedAjv: Ajv | undefined
/** Strict validators by schema text, with the schema each was compiled from; a forgotten one leaves the shared Ajv too. */
const strictOnce = compiledOnce(
  (schema: object) => ({ schema, validate: (sharedAjv ??= createAjv()).compile(schema) }),
  ({ schema }) => sharedAjv!.removeSchema(schema))

/**
 * The strict validator of `schema`, compiled once per process for every schema of the same text:
 * compiling is most of what `register` costs, and a host that builds an app per test or per tenant
 * registers the same schemas again and again.
 */
export function compileStrict (schema: object): Validate {
  const key = JSON.stringify(schema)
  // A schema with an $id names itself in the Ajv that compiles it: a shared one would refuse the same
  // $id with other content, so such a schema gets an Ajv of its own.
  if (key.includes('"$id"')) return createAjv().compile(schema)
  return strictOnce(key, schema).validate
}

/** `validate`, whose errors say what is allowed. */
function readable (validate: Validate): Validate {
  const checked = ((value: unknown) => {
    const valid = validate(value)
    checked.errors = valid ? null : readableErrors(validate.errors!)
    return valid
  }) as Validate
  return checked
}

/**
 * Where a value failed: under a route's body (`body/items/0`), or in an argument of app.orders, which
 * has no body (`items/0`, or the argument's name, `input` or `query`, for the whole of it).
 */
function placeOf (instancePath: string, context: string): string {
  return context === 'body' ? `body${instancePath}` : instancePath.slice(1) || context
}

/** Fastify's FST_ERR_VALIDATION for `value` checked by `validate`, worded as Fastify words it. */
export function validationError (errors: ReadonlyArray<Pick<ErrorObject, 'instancePath' | 'message'>>, context: string) {
  const message = errors.map(error => `${placeOf(error.instancePath, context)} ${error.message}`).join(', ')
  return Object.assign(new codes.FST_ERR_VALIDATION(message), { validation: errors, validationContext: context })
}

/** Throws FST_ERR_VALIDATION unless `value` matches; the `app.orders` twin of route validation, naming the argument. */
export function assertValid<T> (validate: Validate, value: unknown, argument: 'input' | 'query'): asserts value is T {
  // Ajv sets `errors` whenever a check fails.
  if (!validate(value)) throw validationError(validate.errors!, argument)
}

/** `err` as app.orders throws it: a validation error the rules word for a route's body names the argument instead. */
export function forCaller (err: unknown, argument: 'input' | 'query'): unknown {
  const { validation, validationContext } = err as { validation?: ErrorObject[], validationContext?: string }
  return validationContext === 'body' ? validationError(validation!, argument) : err
}
