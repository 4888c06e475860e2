/**
 * Which core each process of the bench runs on: the server on one, everything else (the load
 * generator, a target's OTLP receiver) on the other, where `taskset` exists and there are two.
 * No side effects, so a target may import it.
 */
import { execFileSync } from 'node:child_process'
import { cpus } from 'node:os'

export const SERVER_CORE = 0
export const LOAD_CORE = 1

function hasTaskset (): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v taskset'], { stdio: 'ignore' })
    // The machine's cores, not this process's: a pinned target (one core allowed) still places its receiver.
    return cpus().length >= 2
  } catch {
    return false
  }
}

export const PINNED = hasTaskset()

/** The command and arguments that run `command` on `core` (taskset execs it: the PID is the command's). */
export function onCore (core: number, command: string, args: readonly string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', String(core), command, ...args]] : [command, [...args]]
}
