// How the MySQL storage sends statements: through the callback API under a mysql2/promise pool or connection (no stack trace per statement), and through a host's own methods when it overrides them.
import t from 'tap'
import { callbackSideOf, sessionOf } from '../../../lib/storage/mysql/client.js'

type Callback = (err: Error | null, result?: unknown, fields?: unknown) => void

/** A callback connection that answers each statement with `answer` and records how it was called. */
function callbackConnection (answer: (sql: unknown) => [Error | null, unknown]) {
  const calls: unknown[][] = []
  const statement = (...args: unknown[]) => {
    calls.push(args.slice(0, -1))
    const [err, result] = answer(args[0])
    setImmediate(() => (args.at(-1) as Callback)(err, result, []))
  }
  return { calls, query: statement, execute: statement }
}

/** A wrapper shaped as mysql2/promise's: its statements on its prototype, the callback side as `connection`. */
class PromiseWrapper {
  promiseCalls = 0
  constructor (readonly connection: object) {}
  async query (): Promise<[unknown, unknown]> { this.promiseCalls++; return [[], []] }
  async execute (): Promise<[unknown, unknown]> { this.promiseCalls++; return [[], []] }
}

t.test('a promise wrapper\'s own statements go through its callback side, with the same rows, results and errors', async t => {
  const failure = Object.assign(new Error('Duplicate entry'), { errno: 1062, sqlMessage: 'Duplicate entry \'x\' for key \'PRIMARY\'' })
  const side = callbackConnection(sql => String(Object(sql).sql ?? sql).startsWith('INSERT')
    ? [failure, undefined]
    : String(Object(sql).sql ?? sql).startsWith('SELECT') ? [null, [{ id: 'a' }]] : [null, { affectedRows: 1, insertId: 7 }])
  const wrapper = new PromiseWrapper(side)
  t.equal(callbackSideOf(wrapper), side)
  const session = sessionOf(wrapper)
  t.same(await session.run('SELECT id FROM t WHERE id = ?', ['a']), [{ id: 'a' }])
  t.same(await session.write('COMMIT'), { affectedRows: 1, insertId: 7 })
  await t.rejects(session.write('INSERT INTO t (id) VALUES (?)', ['x']), failure, 'the callback\'s error itself, with its MySQL fields')
  t.equal(wrapper.promiseCalls, 0, 'the promise methods were not called')
  t.same(side.calls.map(call => call.length), [2, 1, 2], 'a statement without values is sent without them')
  t.same(side.calls[0]![1], [Buffer.from('a')], 'values bound as bytes')
})

t.test('a host\'s own statement methods are used as they are, and so is a wrapper without a callback side', async t => {
  const side = callbackConnection(() => [null, []])
  const overridden = Object.assign(new PromiseWrapper(side), { execute: async () => [[{ id: 'host' }], []] as [unknown, unknown] })
  t.equal(callbackSideOf(overridden), undefined, 'an override of execute')
  t.same(await sessionOf(overridden).run('SELECT id FROM t WHERE id = ?', ['a']), [{ id: 'host' }])
  t.equal(callbackSideOf({ ...new PromiseWrapper(side), query: async () => [[], []], execute: async () => [[], []] }), undefined, 'a plain object of statements')
  t.equal(callbackSideOf(new PromiseWrapper({ query: side.query })), undefined, 'a side that cannot execute')
  const bare = new PromiseWrapper({})
  t.equal(callbackSideOf(bare), undefined, 'no callback side')
  await sessionOf(bare).write('COMMIT')
  t.equal(bare.promiseCalls, 1, 'its own methods')
  t.equal(side.calls.length, 0, 'the callback side of an overridden wrapper is never called')
})
