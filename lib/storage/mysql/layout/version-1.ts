// Layout version 1 of the MySQL storage: orders, idempotency keys, the event feed with its sequencer, subscriptions, their progress and dead letters.
import { orderIndexes as index } from '../tables.js'
import type { Tables } from '../tables.js'
import type { LayoutStep } from './step.js'

// Keys compare as the bytes they are: VARBINARY has no collation, so no case folding and no PAD SPACE
// ('a' and 'a ' stay two customers; utf8mb4_bin pads on MariaDB). Strings go in JSON-escaped
// (client.ts, columnText), so the widths are those of the contract's limits, six bytes a character at
// worst: ids and customer ids 128 characters, references 128 visible ASCII, stores and statuses 64.
const ID = 'VARBINARY(768)'
// Timestamps are the ISO strings themselves (UTC, milliseconds), so they read back as written whatever
// the session's time zone and order as JavaScript compares them.
const INSTANT = 'VARBINARY(32)'
// Documents are JSON text: what JSON.stringify writes is valid utf8mb4 (lone surrogates come escaped),
// and LONGTEXT keeps it byte for byte, where a JSON column would rewrite it.
const JSON_TEXT = 'LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin'
const TABLE = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin'

/**
 * Version 1. Every page is a walk of one index whose leading columns the filter fixes, then
 * (created_at, id): MySQL has no partial indexes, so orders without a store hold '' in `store`
 * (which no store key is), and the store's indexes cover them too. The reference is unique per
 * (customer, store); NULL references are not compared by a unique index.
 */
function releaseOne ({ orders, keys, events, sequencer, subscriptions, finished, deadLetters, schema }: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${schema} (
      id TINYINT NOT NULL PRIMARY KEY,
      version INT NOT NULL
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${orders} (
      id ${ID} NOT NULL,
      number BIGINT NOT NULL AUTO_INCREMENT,
      customer_id ${ID} NOT NULL,
      status VARBINARY(384) NOT NULL,
      store VARBINARY(384) NOT NULL DEFAULT '',
      reference VARBINARY(768) NULL,
      created_at ${INSTANT} NOT NULL,
      version BIGINT NOT NULL,
      document ${JSON_TEXT} NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY ${index.number} (number),
      KEY ${index.created} (created_at, id),
      KEY ${index.customer} (customer_id, created_at, id),
      KEY ${index.status} (status, created_at, id),
      KEY ${index.customerStatus} (customer_id, status, created_at, id),
      KEY ${index.reference} (reference, created_at, id),
      UNIQUE KEY ${index.storeReference} (customer_id, reference, store),
      KEY ${index.storeReferenceCreated} (store, reference, created_at, id),
      KEY ${index.store} (store, created_at, id),
      KEY ${index.storeCustomer} (store, customer_id, created_at, id),
      KEY ${index.storeStatus} (store, status, created_at, id),
      KEY ${index.storeCustomerStatus} (store, customer_id, status, created_at, id)
    ) ${TABLE}`,
    // A key is kept as the SHA-256 of the scoped key (JSON-escaped, so a lone surrogate is not U+FFFD):
    // exact, and one fixed width however long the scope.
    `CREATE TABLE IF NOT EXISTS ${keys} (
      key_hash BINARY(32) NOT NULL PRIMARY KEY,
      fingerprint ${JSON_TEXT} NOT NULL,
      order_id ${ID} NOT NULL,
      expires_at ${INSTANT} NOT NULL,
      KEY expires_idx (expires_at)
    ) ${TABLE}`,
    // The outbox columns Debezium's event router reads (id, aggregatetype, aggregateid, type, payload);
    // seq in insert order, position in feed order, given after commit (see sql/sequence-events.ts).
    `CREATE TABLE IF NOT EXISTS ${events} (
      seq BIGINT NOT NULL AUTO_INCREMENT,
      id VARBINARY(255) NOT NULL,
      position BIGINT NULL,
      aggregatetype VARCHAR(16) NOT NULL,
      aggregateid ${ID} NOT NULL,
      type VARCHAR(32) NOT NULL,
      payload ${JSON_TEXT} NOT NULL,
      at ${INSTANT} NOT NULL,
      PRIMARY KEY (seq),
      UNIQUE KEY id_idx (id),
      UNIQUE KEY position_idx (position)
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${sequencer} (
      id TINYINT NOT NULL PRIMARY KEY,
      position BIGINT NOT NULL
    ) ${TABLE}`,
    `INSERT INTO ${sequencer} (id, position) VALUES (1, 0) ON DUPLICATE KEY UPDATE id = id`,
    // Lease times are milliseconds of the database's UTC clock. `changes` (and dead letters'
    // `redeliver`, a count) moves at every update, so a row matched is a row changed, whatever
    // CLIENT_FOUND_ROWS the host's pool sets.
    `CREATE TABLE IF NOT EXISTS ${subscriptions} (
      name VARBINARY(255) NOT NULL PRIMARY KEY,
      holder VARBINARY(255) NULL,
      lease_expires_at BIGINT NULL,
      held_at BIGINT NOT NULL,
      position BIGINT NOT NULL,
      last_event_id VARBINARY(255) NULL,
      changes BIGINT NOT NULL DEFAULT 0
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${finished} (
      name VARBINARY(255) NOT NULL,
      position BIGINT NOT NULL,
      PRIMARY KEY (name, position)
    ) ${TABLE}`,
    `CREATE TABLE IF NOT EXISTS ${deadLetters} (
      name VARBINARY(255) NOT NULL,
      event_id VARBINARY(255) NOT NULL,
      position BIGINT NOT NULL,
      event ${JSON_TEXT} NOT NULL,
      attempts INT NOT NULL,
      error ${JSON_TEXT} NOT NULL,
      at ${INSTANT} NOT NULL,
      redeliver INT NOT NULL DEFAULT 0,
      PRIMARY KEY (name, event_id),
      KEY feed_idx (name, position)
    ) ${TABLE}`
  ]
}

export const version1: LayoutStep = tables => ({
  version: 1,
  summary: 'Orders with their page indexes, idempotency keys, the event feed and its sequencer, subscriptions, ' +
    'the events they finished above their checkpoint, and dead letters.',
  statements: releaseOne(tables)
})
