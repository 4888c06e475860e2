import { describe, expect, it } from 'vitest'
import { compileGlob } from '../../../src/services/auth/glob.js'
import { createPermissionRules } from '../../../src/services/auth/rules.js'

describe('createPermissionRules', () => {
  it('allows everything when there are no rules', () => {
    expect(createPermissionRules([])('anyone', 'notes_delete')).toBe(true)
  })

  it('allows what a principal\'s own allow list matches', () => {
    const allowed = createPermissionRules([{ principal: 'ops', allow: ['notes_*'], deny: [] }])
    expect(allowed('ops', 'notes_read')).toBe(true)
  })

  it('denies what no allow list matches once any rule exists', () => {
    const allowed = createPermissionRules([{ principal: 'ops', allow: ['notes_*'], deny: [] }])
    expect(allowed('ops', 'ledger_transfer')).toBe(false)
  })

  it('denies everything to a principal without rules of its own once any rule exists', () => {
    const allowed = createPermissionRules([{ principal: 'ops', allow: ['*'], deny: [] }])
    expect(allowed('guest', 'time_now')).toBe(false)
  })

  it('applies rules for * to every principal', () => {
    const allowed = createPermissionRules([{ principal: '*', allow: ['time_*'], deny: [] }])
    expect(allowed('guest', 'time_now')).toBe(true)
  })

  it('lets a deny win over an allow of the same principal', () => {
    const allowed = createPermissionRules([{ principal: 'ops', allow: ['notes_*'], deny: ['notes_delete'] }])
    expect(allowed('ops', 'notes_delete')).toBe(false)
  })

  it('lets a deny for * win over a principal\'s own allow', () => {
    const allowed = createPermissionRules([
      { principal: '*', allow: [], deny: ['ledger_*'] },
      { principal: 'ops', allow: ['*'], deny: [] },
    ])
    expect(allowed('ops', 'ledger_transfer')).toBe(false)
  })

  it('merges several rules for one principal', () => {
    const allowed = createPermissionRules([
      { principal: 'ops', allow: ['notes_read'], deny: [] },
      { principal: 'ops', allow: ['time_now'], deny: [] },
    ])
    expect([allowed('ops', 'notes_read'), allowed('ops', 'time_now')]).toEqual([true, true])
  })
})

describe('compileGlob', () => {
  it('anchors the pattern at both ends', () => {
    expect(compileGlob('note').test('notes_read')).toBe(false)
  })

  it('matches ? to exactly one character', () => {
    expect([compileGlob('v?').test('v1'), compileGlob('v?').test('v'), compileGlob('v?').test('v12')]).toEqual([true, false, false])
  })

  it('treats regular-expression characters literally', () => {
    expect([compileGlob('a.c').test('abc'), compileGlob('a.c').test('a.c'), compileGlob('(a|b)').test('a')]).toEqual([false, true, false])
  })
})
