// MySQL for the benchmark: a mysql2 pool on MYSQL_URL (else the local MariaDB), and the tables of a storage dropped.
import { existsSync } from 'node:fs'
import mysql, { type Pool } from 'mysql2/promise'

/** The server the MySQL benchmarks run on. */
export const mysqlUrl = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'

/** True when this checkout has the MySQL adapter. */
export function hasMysqlAdapter (): boolean {
  return existsSync(new URL('../lib/storage/mysql/mysql-storage.ts', import.meta.url))
}

/**
 * A mysql2 pool as the README makes one, with its defaults (10 connections); the plugin and the
 * hand-written server get the same. `connectionLimit: 1` puts every statement on one connection, whose
 * session counters then count them.
 */
export async function openPool (options: { connectionLimit?: number } = {}): Promise<{ pool: Pool, close: () => Promise<void> }> {
  const pool = mysql.createPool({ uri: mysqlUrl, ...options })
  return { pool, close: () => pool.end() }
}

/** Drops every table mysqlStorage() makes for one table name (and none of another storage's sharing the prefix). */
export async function dropTablesOf (pool: Pool, table: string): Promise<void> {
  const names = ['', '_idempotency_keys', '_events', '_sequencer', '_subscriptions', '_finished', '_dead_letters', '_schema'].map(suffix => `\`${table}${suffix}\``)
  await pool.query(`DROP TABLE IF EXISTS ${names.join(', ')}`)
}
