// What one step of the MySQL storage's layout is: a version, what it changes, and its statements.
import type { Tables } from '../tables.js'

export interface SchemaStep {
  /** The layout version the step makes. */
  version: number
  /** What the step changes, and what it locks. */
  summary: string
  /** Statements to run one by one, in order (MySQL commits each DDL statement on its own). Each is safe to run again after a failure. */
  statements: string[]
}

/** A layout step, for the tables of one storage. */
export type LayoutStep = (tables: Tables) => SchemaStep

/** Marks a statement to run again and again until it changes no row: a backfill in batches. */
export const REPEAT = '-- Run again until it changes no row.\n'
