import { Data } from "effect"

/** A dump or a load that cannot go on: the message says why (a line of the file, a dataset, a setting). */
export class TransferFailed extends Data.TaggedError("TransferFailed")<{ readonly message: string }> {}
