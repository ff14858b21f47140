// Strict schema validation, the same for the routes and app.orders whatever the host's ajv options.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'
import { codes } from '../errors.js'

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
    strictTypes: false
  })
  addFormats(ajv)
  // Every validator it compiles names the unknown property it refuses, for the routes and app.orders alike.
  const compile = ajv.compile.bind(ajv)
  ajv.compile = ((schema: object) => namingUnknownProperties(compile(schema))) as Ajv['compile']
  return ajv
}

/** `validate`, whose errors say which property is unknown: `must NOT have additional property "total"`. */
function namingUnknownProperties (validate: Validate): Validate {
  const named = ((value: unknown) => {
    const valid = validate(value)
    named.errors = valid
      ? null
      : validate.errors!.map(error => error.keyword === 'additionalProperties'
        ? { ...error, message: `must NOT have additional property ${JSON.stringify(error.params.additionalProperty)}` }
        : error)
    return valid
  }) as Validate
  return named
}

/** Fastify's FST_ERR_VALIDATION for `value` checked by `validate`, worded as Fastify words it. */
export function validationError (errors: ReadonlyArray<Pick<ErrorObject, 'instancePath' | 'message'>>, context: string) {
  const message = errors.map(error => `${context}${error.instancePath} ${error.message}`).join(', ')
  return Object.assign(new codes.FST_ERR_VALIDATION(message), { validation: errors, validationContext: context })
}

/** Throws FST_ERR_VALIDATION unless `value` matches; the `app.orders` twin of route validation. */
export function assertValid<T> (validate: Validate, value: unknown): asserts value is T {
  // Ajv sets `errors` whenever a check fails.
  if (!validate(value)) throw validationError(validate.errors!, 'body')
}
