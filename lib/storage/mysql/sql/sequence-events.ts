// The gap-free feed on MySQL: feed positions given after commit, in insert order, by one sequencer at a time.
import type { MysqlClient } from '../client.js'
import { inTransaction, sessionOf } from '../client.js'
import type { Tables } from '../tables.js'

/** How many events one sequencer transaction positions at most. */
const BATCH = 1000

/**
 * Why: AUTO_INCREMENT values are taken at insert and become visible at commit, so a reader of
 * `seq > last` would pass an event whose transaction commits a moment later, and skip it for good.
 * Waiting out a gap for a while does not help either: a transaction held open longer than the wait
 * would still be skipped.
 *
 * How: writers insert events with their AUTO_INCREMENT `seq` and a NULL `position`, and stay fully
 * parallel. Before reading, a reader runs the sequencer: in a short READ COMMITTED transaction of its
 * own, it locks the one row of `<table>_sequencer` (`SELECT … FOR UPDATE`, so sequencers run one at a
 * time, on any instance), reads the events already committed that have no position (a consistent read:
 * it never waits for a writer, and READ COMMITTED takes no gap locks that could block one), gives them
 * the next positions in `seq` order, records the last position in the sequencer row, and commits.
 * Readers read `position > last position` only. Positions are only ever given to committed events and
 * only ever above every position given before, so an event that commits late simply gets a later
 * position: nothing is ever skipped, and no gap is ever waited on or given up on. A rolled-back or
 * killed writer's event never commits, so it never gets a position.
 *
 * Each order's events keep their version order: a change to an order reads the version it expects after
 * the change before it committed, so its event takes a larger `seq`, and when both wait to be
 * positioned they are positioned in `seq` order.
 *
 * Cost: writers pay nothing; a reader pays one indexed look for unpositioned events, and the
 * sequencer transaction only when there are some; the events of a commit are listed once the next
 * reader has run the sequencer (for subscriptions, within a poll).
 */
export function sequenceEvents ({ events, sequencer }: Tables, pool: MysqlClient, batch = BATCH): () => Promise<void> {
  const pending = `SELECT seq FROM ${events} WHERE position IS NULL ORDER BY seq LIMIT ?`
  const lock = `SELECT position FROM ${sequencer} WHERE id = 1 FOR UPDATE`
  const record = `UPDATE ${sequencer} SET position = ? WHERE id = 1`
  const { run } = sessionOf(pool)

  /** Positions one batch; whether a full batch was found, so there may be more. */
  const positionBatch = () => inTransaction(pool, async ({ run, write }) => {
    const [{ position }] = await run<{ position: string }>(lock) as [{ position: string }]
    const seqs = (await run<{ seq: string }>(pending, [batch])).map(row => row.seq)
    if (seqs.length === 0) return false
    const last = Number(position)
    const positions = seqs.map((seq, i) => `WHEN ${Number(seq)} THEN ${last + i + 1}`).join(' ')
    // Numbers the database gave, written into the statement: its text differs every run, so it is not prepared.
    await write(`UPDATE ${events} SET position = CASE seq ${positions} END WHERE seq IN (${seqs.map(Number).join(', ')})`)
    await write(record, [last + seqs.length])
    return seqs.length === batch
  }, true)

  async function sequenceNow (): Promise<void> {
    // Most reads find nothing new: one look, no transaction.
    if ((await run(pending, [1])).length === 0) return
    while (await positionBatch());
  }

  // Calls of one instance share a run: one that comes while a run is under way waits for the next
  // one, which starts after it and so sees every event committed before the call.
  let running: Promise<void> | undefined
  let queued: Promise<void> | undefined
  return function sequence (): Promise<void> {
    if (queued !== undefined) return queued
    if (running === undefined) {
      running = sequenceNow().finally(() => { running = undefined })
      return running
    }
    queued = running.catch(() => {}).then(() => {
      queued = undefined
      return sequence()
    })
    return queued
  }
}
