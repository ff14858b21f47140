// The storage's statements on one pg.Client go one at a time, never into pg's own queue; a pool and PGlite take them at once.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { runnerOf, type PostgresClient } from '../../../lib/storage/postgres/client.js'

/** A client that answers each statement after `delay` ms and counts how many it was running at once. */
function fakeClient (kind: 'pg.Client' | 'pg.Pool' | 'PGlite', delay = 5) {
  const sent: unknown[] = []
  let running = 0
  let mostAtOnce = 0
  const client = {
    ...kind === 'pg.Client' && { connectionParameters: {} },
    ...kind === 'pg.Pool' && { totalCount: 1, connect: async () => client },
    async query (statement: string | { name: string, text: string, values: unknown[] }, params?: unknown[]) {
      sent.push(statement)
      running++
      mostAtOnce = Math.max(mostAtOnce, running)
      await sleep(delay)
      running--
      const [text, values] = typeof statement === 'string' ? [statement, params] : [statement.text, statement.values]
      if (text.includes('fail')) throw Object.assign(new Error('failed'), { code: typeof statement === 'string' ? '42601' : '26000' })
      return { rows: [{ text, params: values }] }
    }
  }
  return { client: client as PostgresClient, sent, mostAtOnce: () => mostAtOnce }
}

t.test('on a pg.Client the statements sent at once run one after the other, in the order sent', async t => {
  const fake = fakeClient('pg.Client')
  const { query, run } = runnerOf(fake.client, true)
  const results = await Promise.all([
    run('SELECT 1', [1]),
    query('SELECT 2', [2]),
    run('SELECT 3', [3]),
    query('SELECT fail', []).catch((err: { code: string }) => err.code),
    query('SELECT 4', [4])
  ])
  t.equal(fake.mostAtOnce(), 1, 'never two at once')
  t.same(results, [[{ text: 'SELECT 1', params: [1] }], [{ text: 'SELECT 2', params: [2] }], [{ text: 'SELECT 3', params: [3] }], '42601',
    [{ text: 'SELECT 4', params: [4] }]], 'each gets its own answer, and a failure does not hold up the next')
  t.same(fake.sent.map(statement => typeof statement === 'string' ? statement : (statement as { text: string }).text),
    ['SELECT 1', 'SELECT 2', 'SELECT 3', 'SELECT fail', 'SELECT 4'], 'in the order sent')
})

t.test('a named statement lost behind a pooler is sent again unnamed in its turn', async t => {
  const fake = fakeClient('pg.Client')
  const { run } = runnerOf(fake.client, true)
  const [lost, next] = await Promise.all([run('SELECT fail', []).catch(() => 'still failing'), run('SELECT 5', [5])])
  t.equal(lost, 'still failing', 'sent again unnamed, the statement itself failed')
  t.same(next, [{ text: 'SELECT 5', params: [5] }], 'the one sent meanwhile, named, is answered')
  t.same(await run('SELECT 6', [6]), [{ text: 'SELECT 6', params: [6] }])
  t.equal(fake.mostAtOnce(), 1, 'never two at once')
  t.same(fake.sent.map(statement => typeof statement), ['object', 'object', 'string', 'string'], 'named until the loss, unnamed from then on')
})

t.test('a pool and PGlite take statements at once: they queue or spread them themselves', async t => {
  for (const kind of ['pg.Pool', 'PGlite'] as const) {
    const fake = fakeClient(kind)
    const { query } = runnerOf(fake.client, false)
    await Promise.all([query('SELECT 1', []), query('SELECT 2', []), query('SELECT 3', [])])
    t.equal(fake.mostAtOnce(), 3, kind)
  }
})

t.test('two storages on one pg.Client share its turn', async t => {
  const fake = fakeClient('pg.Client')
  await Promise.all([runnerOf(fake.client, false).query('SELECT 1', []), runnerOf(fake.client, true).run('SELECT 2', [])])
  t.equal(fake.mostAtOnce(), 1)
})
