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

/** `--name value` taken out of `args`, so that what is left are the positional arguments: the value, or `fallback`. */
export function takeFlag (args: string[], name: string, fallback: string): string {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? fallback : args.splice(index, 2)[1]!
}
