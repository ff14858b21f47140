import t from 'tap'
import { randomUUID } from 'node:crypto'
import { idPositions } from '../../../lib/storage/memory/id-positions.js'

/** A feed of ids as the memory feed keeps them: positions from `first` on are held. */
function feed () {
  const ids: string[] = []
  let first = 0
  const positions = idPositions(position => position >= first && position < ids.length ? ids[position] : undefined, () => ({ first, end: ids.length }))
  return {
    positions,
    append (id: string): boolean {
      if (!positions.add(id, ids.length)) return false
      ids.push(id)
      return true
    },
    purgeBefore (position: number) {
      first = position
    }
  }
}

t.test('every id of a hundred thousand is found at its position, and none is taken twice', async t => {
  const { positions, append } = feed()
  const ids = Array.from({ length: 100_000 }, () => randomUUID())
  t.ok(ids.every(append), 'each new id is recorded')
  t.ok(ids.every((id, position) => positions.get(id) === position), 'each is found where it was stored, after the table grew many times')
  t.notOk(append(ids[0]!), 'the oldest id is refused a second time')
  t.notOk(append(ids[99_999]!), 'and so is the newest')
  t.equal(positions.get(randomUUID()), undefined, 'an id never stored names no position')
})

t.test('ids that are not UUIDs, and ids alike but for one character, are told apart', async t => {
  const { positions, append } = feed()
  const ids = ['', 'a', 'b', 'ab', 'ba', 'evt-1', 'evt-2', 'evt-10', 'é', '😀']
  t.ok(ids.every(append))
  t.same(ids.map(positions.get), ids.map((_, position) => position))
  t.notOk(append('evt-1'))
})

t.test('a purged id names no position, its slot is dropped when the table is made anew, and it may be stored again', async t => {
  const { positions, append, purgeBefore } = feed()
  const ids = Array.from({ length: 2000 }, (_, i) => `event-${i}`)
  ids.forEach(append)
  purgeBefore(1500)
  t.equal(positions.get('event-0'), undefined, 'a purged id: its slot is still taken, and the event it names is gone')
  t.equal(positions.get('event-1500'), 1500, 'the oldest held id')
  positions.rebuild()
  t.equal(positions.get('event-1499'), undefined, 'the table made anew holds no purged id')
  t.same(ids.slice(1500).map(positions.get), ids.slice(1500).map((_, i) => 1500 + i), 'and every held one where it was')
  t.ok(append('event-0'), 'an id purged is free again, as a deleted row frees its key')
  t.equal(positions.get('event-0'), 2000)
})

t.test('made anew after the array lost its first ids, every id held is found at its new position, and none of those cut off', async t => {
  let ids = Array.from({ length: 3000 }, (_, i) => `event-${i}`)
  const positions = idPositions(position => ids[position], () => ({ first: 0, end: ids.length }))
  ids.forEach((id, position) => positions.add(id, position))
  ids = ids.slice(1200)
  positions.rebuild(1200)
  t.equal(positions.get('event-1199'), undefined, 'an id cut off names nothing')
  t.same(ids.map(positions.get), ids.map((_, position) => position), 'every other one is where it now is')
  t.ok(positions.add('event-0', ids.length), 'an id cut off may be stored again')
})
