"""The `dataset` SQLite extension: Apache Flink's DataSet operators in SQL.

    import sqlite3
    import sqlite_dataset

    db = sqlite3.connect(":memory:")
    sqlite_dataset.load(db)
    db.execute("SELECT ds_version()").fetchone()

loadable_path() is the library's path, for any other driver that loads
SQLite extensions (SQLite derives the entry point from the file name).
"""
import os
import sys

__version__ = "0.2.0"
__all__ = ["load", "loadable_path", "__version__"]


def loadable_path():
    """The absolute path of the extension's loadable library."""
    if sys.platform == "darwin":
        name = "dataset.dylib"
    elif sys.platform == "win32":
        name = "dataset.dll"
    else:
        name = "dataset.so"
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def load(conn):
    """Load the extension into conn, a sqlite3.Connection.

    Extension loading is enabled for the load only and disabled again
    afterwards, so SQL cannot call load_extension() on conn.
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "sqlite_dataset.load: this Python's sqlite3 module cannot load "
            "extensions (it was built without SQLITE_ENABLE_LOAD_EXTENSION); "
            "use a Python whose sqlite3 has enable_load_extension(), such as "
            "a distribution's python3, or load loadable_path() with another "
            "driver")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
