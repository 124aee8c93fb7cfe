// Strings kept beyond the text they were cut from.

/**
 * A string of its own for a slice that is kept: V8 keeps a sliced string's parent text alive as long as the slice
 * lives, and the compiler's fields are slices of 1 MiB decoded chunks or whole spill files. Prefixing makes a new
 * string that slice(1) flattens into fresh memory, whatever the length.
 */
export const ownCopy = (s: string): string => (' ' + s).slice(1);
