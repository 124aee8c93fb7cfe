// Size caps the compiler enforces on a release and the runtime budgets against: one place for both sides.
// Each cap is far above what the real register holds (its longest label is ~80 bytes, its longest provider ID
// ~100), so a release that exceeds one is broken or hostile, and is refused naming the file, row and cap.

/** Longest register ID, provider key, namespace or provider external ID, in UTF-8 bytes. */
export const MAX_ID_BYTES = 256;

/** Longest label, alias, name or other short text cell (country, gender, kind, ...), in UTF-8 bytes. */
export const MAX_TEXT_BYTES = 1024;

/** Longest cell of any other column (overlay_links.inherited, a JSON array, is the long one), in UTF-8 bytes. */
export const MAX_CELL_BYTES = 64 * 1024;

/** Largest compiled entity shard (the full Entity JSON with every expansion), in bytes. */
export const MAX_SHARD_BYTES = 256 * 1024;

/** Largest private notice batch file, in bytes. */
export const MAX_NOTICE_FILE_BYTES = 16 * 1024 * 1024;

/** Deepest nesting of a notice finding's free-form `source` or `payload` object (the object itself is level 1). */
export const MAX_NOTICE_DEPTH = 32;
