// Compiled forms of schemas kept per process by their text, so an app per test or per tenant compiles each schema once.

/** How many compiled forms one cache keeps: far more than the schemas of any set of apps. */
const KEPT = 256

/**
 * `compile`, remembered by a key that spells its source (the schema's text): a source of a text seen
 * before gets the form compiled then. The oldest form makes room once KEPT are held; `forget` is told.
 */
export function compiledOnce<Source, Form> (compile: (source: Source) => Form, forget?: (form: Form) => void): (key: string, source: Source) => Form {
  const kept = new Map<string, Form>()
  return (key, source) => {
    let form = kept.get(key)
    if (form === undefined) {
      form = compile(source)
      if (kept.size === KEPT) {
        const [oldestKey, oldest] = kept.entries().next().value!
        kept.delete(oldestKey)
        forget?.(oldest)
      }
      kept.set(key, form)
    }
    return form
  }
}
