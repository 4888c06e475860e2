/** `--name value` on the command line: the value, or undefined. */
export function flag (name: string, args: readonly string[] = process.argv.slice(2)): string | undefined {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? undefined : args[index + 1]
}

/** `--name N`, or `fallback`. */
export function numberFlag (name: string, fallback: number): number {
  const value = flag(name)
  return value === undefined ? fallback : Number(value)
}
