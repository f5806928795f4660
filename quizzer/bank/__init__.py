"""The question bank: schema, loading, validation and selection."""
