// Values hosts throw that describe themselves badly: what `Object.assign(new Error(), await res.json())` makes, a throwing getter, a revoked Proxy.

/** A fresh set each call: a revoked Proxy cannot be made twice from one. */
export function oddFailures (): Array<[what: string, thrown: unknown]> {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  const getterThrows = new Error('hidden')
  Object.defineProperty(getterThrows, 'message', { get () { throw new Error('no message for you') } })
  return [
    ['an Error whose message is null', Object.assign(new Error('x'), { message: null })],
    ['an Error whose message is an object', Object.assign(new Error('x'), { message: { error: 'invalid_request' } })],
    ['an Error whose message getter throws', getterThrows],
    ['a revoked Proxy', proxy],
    ['null', null],
    ['a string', 'erp said no'],
    ['an object without a prototype', Object.create(null)]
  ]
}
