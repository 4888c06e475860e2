import { readdirSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs'
import { join, resolve } from 'node:path'

export interface ToolsWatch {
  close (): void
}

/** How long a folder must stay quiet before it is reloaded: an editor's save is several writes. */
const QUIET_MS = 150
const MAX_WAIT_MS = 2_000

/**
 * Call `onChange` once a tools folder (and its helper folders) has been quiet for a moment
 * after a file in it was added, changed or removed. `node_modules` and dot-folders are not
 * watched (installs would reload the tools thousands of times, and Node's recursive watch would
 * hold a watcher per folder of them); editor swap and backup files do not count as changes.
 */
export function watchToolsDir (dir: string, onChange: () => void): ToolsWatch {
  const root = resolve(dir)
  /** Each watched folder with the inode it had: a folder removed and made again is another one. */
  const watchers = new Map<string, { readonly watcher: FSWatcher, readonly ino: number }>()
  let timer: NodeJS.Timeout | undefined
  let closed = false

  let firstUnhandled: number | undefined
  const changed = (name: string | null): void => {
    if (closed || (name !== null && isScratch(name))) return
    clearTimeout(timer)
    firstUnhandled ??= Date.now()
    // Writes that never pause (a build writing into the folder) still reload every MAX_WAIT_MS.
    const wait = Math.max(0, Math.min(QUIET_MS, firstUnhandled + MAX_WAIT_MS - Date.now()))
    timer = setTimeout(() => {
      firstUnhandled = undefined
      // What is watched follows the folders as they are now (made, removed, replaced), then the load.
      sync()
      onChange()
    }, wait)
  }
  const sync = (): void => {
    for (const [path, { watcher, ino }] of watchers) {
      if (inodeOf(path) !== ino) {
        watcher.close()
        watchers.delete(path)
      }
    }
    add(root)
  }
  const add = (folder: string): void => {
    if (!watchers.has(folder)) {
      const ino = inodeOf(folder)
      if (ino === undefined) return // gone, or not there yet: the root is looked for again below
      try {
        const watcher = watch(folder, (_event, name) => { changed(name === null ? null : String(name)) })
        watcher.on('error', () => { watcher.close(); watchers.delete(folder) })
        watchers.set(folder, { watcher, ino })
      } catch {
        return // unreadable: the next load says so
      }
    }
    for (const entry of entriesOf(folder)) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.')) add(join(folder, entry.name))
    }
  }
  add(root)
  // The folder itself replaced (a deploy's rename, rm and mkdir) sends no event to its old
  // watcher's successor: look at it now and then.
  const rootCheck = setInterval(() => {
    if (inodeOf(root) !== watchers.get(root)?.ino) changed(null)
  }, ROOT_CHECK_MS)
  rootCheck.unref()
  return {
    close () {
      closed = true
      clearTimeout(timer)
      clearInterval(rootCheck)
      for (const { watcher } of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}

const ROOT_CHECK_MS = 1_000

/**
 * Files editors write beside the real one: vim's swap files and its write test, backups, temp
 * saves, dot-files. Not `..data`, the link a Kubernetes ConfigMap volume swaps on an update.
 */
function isScratch (name: string): boolean {
  const base = name.split('/').pop()!
  if (base.startsWith('..data')) return false
  return base.startsWith('.') || base.endsWith('~') || /\.(swp|swx|tmp)$/.test(base) || base === '4913'
}

function entriesOf (folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
  } catch {
    return []
  }
}

function inodeOf (folder: string): number | undefined {
  try {
    const stats = statSync(folder)
    return stats.isDirectory() ? stats.ino : undefined
  } catch {
    return undefined
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
