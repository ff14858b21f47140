// A subscription survives a crash: its process is killed with SIGKILL mid-stream, the next resumes at the checkpoint.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { uncoveredChild } from '../helper.js'
import { mysqlUrl, testMysql } from '../mysql-helper.js'
import { testDatabase } from '../postgres-helper.js'

// Two subscriber processes start, one after the other's lease lapses, in each test on each backend: slower than most test files.
t.setTimeout(300_000)
const db = await testDatabase(t)
const fixture = new URL('../fixtures/subscriber.ts', import.meta.url)

/** Where the subscriber processes keep their orders: PostgreSQL (the server, else PGlite), and MySQL when MYSQL_URL names a server. */
interface Backend {
  label: string
  freshTable: () => string
  env: Record<string, string>
}
const backends: Backend[] = [{ label: db.server ? 'server' : 'PGlite', freshTable: db.freshTable, env: {} }]
if (mysqlUrl !== '') backends.push({ label: 'MySQL', freshTable: testMysql(t).freshTable, env: { STORAGE: 'mysql', MYSQL_URL: mysqlUrl } })
else t.test('subscriptions killed with SIGKILL on MySQL', { skip: 'MYSQL_URL is not set: no MariaDB or MySQL server to kill subscribers on' }, async () => {})

/** A subscriber process on the backend's database: a server's, or this process's PGlite over IPC. */
function startSubscriber ({ env: where }: Backend, table: string, env: Record<string, string>): ChildProcess {
  // Through tsx, out of the coverage: the tests in process cover what the subscriber runs.
  const { DATABASE_URL, MYSQL_URL, ...rest } = process.env
  const child = fork(fixture, [], {
    ...uncoveredChild({ ...rest, ...(db.server ? { DATABASE_URL } : {}), ...where, TABLE: table, ...env }),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  child.on('message', ({ id, text, params }: { id: string, text: string, params: unknown[] }) => {
    db.client.query(text, params).then(
      ({ rows }) => { if (child.connected) child.send({ id, rows }) },
      (err: Error) => { if (child.connected) child.send({ id, error: err.message }) })
  })
  t.teardown(() => { child.kill('SIGKILL') })
  return child
}

const linesOf = (file: string) => existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(line => line !== '') : []

async function until (what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within 60 s: ${what}`)
    await sleep(20)
  }
}

for (const backend of backends) crashTests(backend)

/** The three crash tests on one backend, each process writing its files into a folder of the backend's. */
function crashTests (backend: Backend): void {
  const folder = mkdtempSync(join(tmpdir(), 'fastify-order-crash-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  const delivered = join(folder, 'delivered.txt')
  const feed = join(folder, 'feed.json')
  const start = (table: string, env: Record<string, string>) => startSubscriber(backend, table, { DELIVERED_FILE: delivered, ...env })
  const lines = (file = delivered) => linesOf(file)

  t.test(`a subscription killed with SIGKILL mid-stream resumes from its checkpoint and skips nothing (${backend.label})`, async t => {
    const events = 60
    const table = backend.freshTable()
    const first = start(table, { CREATE: String(events) })
    await until('the first process handles some events', () => lines().length >= 15)
    first.kill('SIGKILL')
    await once(first, 'exit')
    const beforeCrash = lines()
    t.ok(beforeCrash.length < events, `killed mid-stream, after ${beforeCrash.length} of ${events} events`)

    const second = start(table, { FEED_FILE: feed })
    await until('the second process reports the feed', () => existsSync(feed))
    const all: string[] = JSON.parse(readFileSync(feed, 'utf8'))
    t.equal(all.length, events, 'one event per created order')
    await until('every event is delivered', () => new Set(lines()).size === events)
    second.kill('SIGTERM')
    await once(second, 'exit')

    const deliveries = lines()
    const firsts = deliveries.filter((id, index) => deliveries.indexOf(id) === index)
    t.same(firsts, all, 'every event of the feed is delivered, in feed order')
    const again = deliveries.length - firsts.length
    t.ok(again <= 1, `at most the event in flight at the kill is delivered twice (${again})`)
    if (again === 1) t.equal(deliveries[beforeCrash.length], beforeCrash.at(-1), 'the redelivered event is the one handled last before the kill')
  })

  t.test(`a webhook killed with SIGKILL mid-stream resumes from its checkpoint: the receiver gets every event, in order (${backend.label})`, async t => {
    const events = 40
    const table = backend.freshTable()
    const secret = `whsec_${randomBytes(32).toString('base64')}`
    const received: string[] = []
    const server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', chunk => chunks.push(chunk))
      request.on('end', () => {
        // Only what the secret signed counts; slowly, so the kill lands mid-stream.
        new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>)
        received.push(request.headers['webhook-id'] as string)
        setTimeout(() => response.end(), 10)
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => { server.closeAllConnections(); server.close() })
    const env = { WEBHOOK_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, WEBHOOK_SECRET: secret }

    const first = start(table, { ...env, CREATE: String(events) })
    await until('the first process delivers some events', () => received.length >= 10)
    first.kill('SIGKILL')
    await once(first, 'exit')
    const beforeCrash = received.length
    t.ok(beforeCrash < events, `killed mid-stream, after ${beforeCrash} of ${events} deliveries`)

    const webhookFeed = join(folder, 'webhook-feed.json')
    const second = start(table, { ...env, FEED_FILE: webhookFeed })
    await until('the second process reports the feed', () => existsSync(webhookFeed))
    const all: string[] = JSON.parse(readFileSync(webhookFeed, 'utf8'))
    await until('every event is delivered', () => new Set(received).size === events)
    second.kill('SIGTERM')
    await once(second, 'exit')

    const firsts = received.filter((id, index) => received.indexOf(id) === index)
    t.same(firsts, all, 'every event of the feed reaches the receiver, in feed order')
    t.ok(received.length - firsts.length <= 1, `at most the event in flight at the kill twice (${received.length - firsts.length})`)
  })

  t.test(`with concurrency, a subscription killed with SIGKILL redelivers only the events that were in flight (${backend.label})`, async t => {
    const orders = 20
    const table = backend.freshTable()
    const concurrency = 4
    // Lines "start <event> <order> <version>" and "done <event>", in the order the handler wrote them.
    const marked = join(folder, 'marks.txt')
    const marks = () => lines(marked).map(line => line.split(' '))
    const first = start(table, { CREATE: String(orders), MOVES: '1', CONCURRENCY: String(concurrency), STUCK: '1', DELIVERED_FILE: marked })
    await until('the first process finishes events past the one stuck in flight', () => marks().filter(([mark]) => mark === 'done').length >= 15)
    first.kill('SIGKILL')
    await once(first, 'exit')
    const beforeCrash = marks()
    const startedBefore = new Set(beforeCrash.filter(([mark]) => mark === 'start').map(([, id]) => id))
    const doneBefore = new Set(beforeCrash.filter(([mark]) => mark === 'done').map(([, id]) => id))
    const stuck = beforeCrash[0]![1]!
    t.notOk(doneBefore.has(stuck), 'the first event was still in flight at the kill')

    const concurrentFeed = join(folder, 'concurrent-feed.json')
    const second = start(table, { CONCURRENCY: String(concurrency), FEED_FILE: concurrentFeed, DELIVERED_FILE: marked })
    await until('the second process reports the feed', () => existsSync(concurrentFeed))
    const all: string[] = JSON.parse(readFileSync(concurrentFeed, 'utf8'))
    t.equal(all.length, 2 * orders, 'each order created and paid')
    await until('every event is done', () => new Set(marks().filter(([mark]) => mark === 'done').map(([, id]) => id)).size === all.length)
    second.kill('SIGTERM')
    await once(second, 'exit')

    const afterCrash = marks().slice(beforeCrash.length).filter(([mark]) => mark === 'start')
    const again = afterCrash.map(([, id]) => id!).filter(id => startedBefore.has(id))
    t.ok(again.includes(stuck), 'the event stuck in flight is delivered again')
    t.ok(again.length <= concurrency, `only events that were in flight are delivered again: ${again.length}, at most ${concurrency}`)
    const notAgain = [...doneBefore].filter(id => !again.includes(id!))
    t.ok(notAgain.length >= doneBefore.size - (concurrency - 1), `the events finished above the stuck one are not delivered again (${notAgain.length} of ${doneBefore.size})`)
    t.same(new Set([...startedBefore, ...afterCrash.map(([, id]) => id)]), new Set(all), 'every event of the feed is delivered')
    t.equal(afterCrash.length, all.length - startedBefore.size + again.length, 'each event not started before the kill once')
    for (const deliveries of [beforeCrash.filter(([mark]) => mark === 'start'), afterCrash]) {
      const versions = new Map<string, number[]>()
      for (const [, , order, version] of deliveries) versions.set(order!, [...versions.get(order!) ?? [], Number(version)])
      t.ok([...versions.values()].every(list => list.every((version, i) => i === 0 || version > list[i - 1]!)), 'each process delivers each order\'s events in order')
    }
  })
}
