import { describe, expect, it } from 'vitest'
import timeNow, { createTimeNowTool } from '../../tools/time-now.js'
import { expectFailure, harness } from './app.js'

const FIXED = new Date('2025-03-01T23:30:00.000Z')
const fixed = harness([createTimeNowTool({ now: () => FIXED })])

describe('time_now', () => {
  it('defaults to UTC', async () => {
    const { value } = await fixed.call('time_now', {})
    expect(value).toEqual({ timeZone: 'UTC', iso: '2025-03-01T23:30:00.000Z', local: '2025-03-01T23:30:00', offset: '+00:00', weekday: 'Saturday', epochMs: FIXED.getTime() })
  })

  it('gives the wall clock, offset and weekday of another zone (across midnight)', async () => {
    const { value } = await fixed.call('time_now', { timeZone: 'Asia/Kolkata' })
    expect(value).toMatchObject({ timeZone: 'Asia/Kolkata', local: '2025-03-02T05:00:00', offset: '+05:30', weekday: 'Sunday' })
  })

  it('gives negative offsets', async () => {
    const { value } = await fixed.call('time_now', { timeZone: 'America/New_York' })
    expect(value).toMatchObject({ local: '2025-03-01T18:30:00', offset: '-05:00' })
  })

  it('refuses an unknown time zone with a schema error pointing at timeZone', async () => {
    const error = await expectFailure(fixed.call('time_now', { timeZone: 'Mars/Olympus_Mons' }), 400, 'TOOLGATE_INVALID_INPUT')
    expect(error.extensions.errors).toEqual([expect.objectContaining({ pointer: '/timeZone' })])
  })

  it('refuses unknown arguments', async () => {
    await expectFailure(fixed.call('time_now', { zone: 'UTC' }), 400, 'TOOLGATE_INVALID_INPUT')
  })

  it('is declared read-only and concurrency-safe, and the shipped one reads the real clock', async () => {
    expect(timeNow).toMatchObject({ id: 'time_now', isReadOnly: true, isConcurrencySafe: true, effects: [] })
    const before = Date.now()
    const { value } = await harness([timeNow]).call<{ epochMs: number }>('time_now', { timeZone: 'Europe/Paris' })
    expect(value.epochMs).toBeGreaterThanOrEqual(before)
    expect(value.epochMs).toBeLessThanOrEqual(Date.now())
  })
})
