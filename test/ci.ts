/**
 * Whether this run is CI (`CI` set and not "false"). There a missing service or browser is a
 * failure, never a quiet skip: the tests that need it are the proof.
 */
export const IN_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'
