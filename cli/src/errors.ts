// The CLI's own failures, by exit code: 2 for a command line that is wrong (what yargs reports
// too), 1 for anything else that went wrong (an API error is a HostplaneError, also 1).

/** Exit 1: the command was understood but could not be done (not logged in, label mismatch, job failed). */
export class CliError extends Error {
  readonly exitCode: number = 1;
}

/** Exit 2: bad usage (an unknown context, a missing file argument). */
export class UsageError extends CliError {
  override readonly exitCode = 2;
}
