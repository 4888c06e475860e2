/**
 * The gateway could not start serving (its address, its first document). Whoever throws it has
 * closed what the start had opened; `toolgate serve` prints the message, one line, and exits 1.
 */
export class StartError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StartError'
  }
}
