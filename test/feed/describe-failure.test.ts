// Failures described without throwing, whatever was thrown: the text stored and shown, the type for telemetry, the Error logged.
import t from 'tap'
import { describeFailure, failureType, loggableFailure } from '../../lib/feed/describe-failure.js'
import { oddFailures } from './odd-failures.js'

t.test('every odd thrown value is described as readable text, and describing it never throws', async t => {
  const described = oddFailures().map(([what, thrown]) => [what, describeFailure(thrown)])
  t.same(described, [
    ['an Error whose message is null', 'an Error was thrown whose message is null, not a string'],
    ['an Error whose message is an object', 'an Error was thrown whose message is object, not a string'],
    ['an Error whose message getter throws', 'a value that cannot be read was thrown (a revoked Proxy, or a getter that throws)'],
    ['a revoked Proxy', 'a value that cannot be read was thrown (a revoked Proxy, or a getter that throws)'],
    ['null', 'null was thrown'],
    ['a string', 'erp said no'],
    ['an object without a prototype', 'an object was thrown: {}']
  ])
  t.equal(describeFailure(new Error('erp down')), 'erp down', 'an ordinary Error is its message')
  t.equal(describeFailure({ toJSON () { throw new Error('no') } }), 'an object was thrown', 'a toJSON that throws leaves the type')
})

t.test('the type for telemetry is a code or a class name, never a message, and never throws', async t => {
  t.same(oddFailures().map(([, thrown]) => failureType(thrown)), ['Error', 'Error', 'Error', 'unknown', 'unknown', 'String', 'unknown'])
})

t.test('a failure is logged as itself when a logger can read it, else as an Error carrying its description', async t => {
  const plain = Object.assign(new Error('erp down'), { status: 503, cause: new Error('socket hang up') })
  t.equal(loggableFailure(plain), plain, 'an ordinary Error, nested cause and all')
  for (const [what, thrown] of oddFailures()) {
    const logged = loggableFailure(thrown)
    t.not(logged, thrown, what)
    t.equal(logged.message, describeFailure(thrown), what)
  }
  const badStack = Object.assign(new Error('x'), { stack: 42 })
  const badCause = new Error('outer', { cause: Object.assign(new Error('inner'), { message: null }) })
  const badProperty = Object.assign(new Error('outer'), { response: Object.assign(new Error('inner'), { message: 7 }) })
  let deep: Error = new Error('deepest')
  for (let i = 0; i < 5; i++) deep = Object.assign(new Error(`level ${i}`), { inner: deep })
  let deepCause: Error = new Error('deepest')
  for (let i = 0; i < 5; i++) deepCause = new Error(`level ${i}`, { cause: deepCause })
  for (const [what, thrown] of [['a stack that is no string', badStack], ['a cause whose message is null', badCause],
    ['a property holding an unreadable Error', badProperty], ['errors nested too deep to read', deep], ['causes nested too deep', deepCause]] as const) {
    t.not(loggableFailure(thrown), thrown, what)
  }
})
