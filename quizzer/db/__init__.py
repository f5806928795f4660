"""Storage: ORM rows, the UTC column type, engine setup and migrations."""
