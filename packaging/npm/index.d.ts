/** Loads the `dataset` extension into a connection that has loadExtension(path), such as a better-sqlite3 Database; returns it. */
export function load<T extends { loadExtension(path: string): unknown }>(db: T): T;
/** The absolute path of the extension's loadable library, for any driver. */
export function getLoadablePath(): string;
