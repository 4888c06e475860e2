import { readFile } from 'node:fs/promises'
import { verifyAuditText } from '../../src/services/audit/verify.js'
import { EXIT, UsageError, type Command } from '../command.js'

export const audit: Command = {
  help: `usage: toolgate audit verify [--mixed] FILE

Check that no line of the audit log FILE was changed, removed, inserted or reordered since the
gateway wrote it. Prints the number of lines and the chain's head (last seq and hash), or the
first broken line and why.

      --mixed        FILE also holds other lines (a captured stdout with AUDIT_LOG=stdout and
                     JSON logs): skip lines that are not audit records
      --head HASH    the head hash kept elsewhere (the gateway logs it when it stops): also
                     catches lines cut from the end and a rewrite of the whole file

exit status: 0 the chain is intact, 1 a line is broken (or torn by a crash: every line
before it verifies), 2 usage`,
  options: { mixed: { type: 'boolean' }, head: { type: 'string' } },
  async run (args) {
    const [action, file, ...rest] = args.positionals
    if (action !== 'verify') throw new UsageError(action === undefined ? 'expected: audit verify FILE' : `unknown audit action "${action}"; expected: audit verify FILE`)
    if (file === undefined || rest.length > 0) throw new UsageError('expected exactly one FILE: audit verify FILE')
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      process.stderr.write(`toolgate: cannot read ${file}: ${(error as Error).message}\n`)
      return EXIT.failed
    }
    const head = args.values.head
    if (head !== undefined && (typeof head !== 'string' || !/^[0-9a-f]{64}$/.test(head))) throw new UsageError('--head takes the 64-character hex hash of the last line')
    const verdict = verifyAuditText(text, { mixed: args.values.mixed === true, head })
    if (!verdict.ok) {
      process.stdout.write(`${file}:${verdict.line}: ${verdict.reason}\n`)
      return EXIT.failed
    }
    const resumed = verdict.resumedAfterTear.length === 0 ? '' : `; resumed after torn line(s) ${verdict.resumedAfterTear.join(', ')} (a crash mid-write, recorded by the gateway)`
    process.stdout.write(`${file}: intact, ${verdict.head.seq} records; head seq ${verdict.head.seq} hash ${verdict.head.hash}${resumed}\n`)
    return EXIT.ok
  },
}
