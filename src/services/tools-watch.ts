import { readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs'
import { join, resolve } from 'node:path'

export interface ToolsWatch {
  close (): void
}

/** How long a folder must stay quiet before it is reloaded: an editor's save is several writes. */
const QUIET_MS = 150

/**
 * Call `onChange` once a tools folder (and its helper folders) has been quiet for a moment
 * after a file in it was added, changed or removed. `node_modules` and dot-folders are not
 * watched (installs would reload the tools thousands of times, and Node's recursive watch would
 * hold a watcher per folder of them); editor swap and backup files do not count as changes.
 */
export function watchToolsDir (dir: string, onChange: () => void): ToolsWatch {
  const root = resolve(dir)
  const watchers = new Map<string, FSWatcher>()
  let timer: NodeJS.Timeout | undefined
  let closed = false

  const changed = (folder: string, name: string | null): void => {
    if (closed || (name !== null && isScratch(name))) return
    // A new or removed folder changes what is watched; a file, only what is loaded.
    sync(folder)
    clearTimeout(timer)
    timer = setTimeout(onChange, QUIET_MS)
  }
  const sync = (folder: string): void => {
    for (const [path, watcher] of watchers) {
      if (path !== root && path.startsWith(folder) && !exists(path)) {
        watcher.close()
        watchers.delete(path)
      }
    }
    add(folder)
  }
  const add = (folder: string): void => {
    if (!watchers.has(folder)) {
      try {
        const watcher = watch(folder, (_event, name) => { changed(folder, name === null ? null : String(name)) })
        watcher.on('error', () => { watcher.close(); watchers.delete(folder) })
        watchers.set(folder, watcher)
      } catch {
        return // gone already, or unreadable: the next load says so
      }
    }
    for (const entry of entriesOf(folder)) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.')) add(join(folder, entry.name))
    }
  }
  add(root)
  return {
    close () {
      closed = true
      clearTimeout(timer)
      for (const watcher of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}

/** Files editors write beside the real one: vim's swap files and its write test, backups, temp saves. */
function isScratch (name: string): boolean {
  const base = name.split('/').pop()!
  return base.startsWith('.') || base.endsWith('~') || /\.(swp|swx|tmp)$/.test(base) || base === '4913'
}

function entriesOf (folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
  } catch {
    return []
  }
}

function exists (folder: string): boolean {
  try {
    readdirSync(folder)
    return true
  } catch {
    return false
  }
}

/**
 * Run `task` now, or once more after the run in progress: requests that arrive while it runs
 * collapse into one, so a burst of saves or signals reloads at most twice.
 */
export function coalesced (task: () => Promise<unknown>): () => void {
  let running = false
  let again = false
  const run = (): void => {
    if (running) {
      again = true
      return
    }
    running = true
    void task().catch(() => undefined).finally(() => {
      running = false
      if (again) {
        again = false
        run()
      }
    })
  }
  return run
}
