// A module loader hook that makes @opentelemetry/api impossible to import, as in an app that has not installed it.
export async function resolve (specifier, context, nextResolve) {
  if (specifier === '@opentelemetry/api') {
    throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' })
  }
  return nextResolve(specifier, context)
}
