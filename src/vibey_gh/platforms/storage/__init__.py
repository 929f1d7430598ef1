"""Files on disk as the platform keeps them: atomic, durable, locked, never the system's.

Modules: `atomic_files` (atomic writes and private dirs; `vibey_gh.files` re-exports them),
`durability` (durable writes: F_FULLFSYNC on macOS), `locks` (file locks never taken through
links), `system_paths` (which paths are the system's rather than the user's).
"""
