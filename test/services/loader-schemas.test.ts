import { describe, expect, it } from 'vitest'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'

describe('loading a tool folder', () => {
  it('refuses a schema that cannot give a JSON Schema, naming the tool, the file and the field', async () => {
    const dir = new URL('../fixtures/bare-valibot-tools', import.meta.url).pathname
    await expect(loadToolsFromDir(dir)).rejects.toThrow(/tool "bare_valibot" \(.*bare\.ts\): field "inputSchema".*JSON Schema.*toStandardJsonSchema/)
  })
})
