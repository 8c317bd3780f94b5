"""Suite loading: YAML with positions, JSON Schemas, the suite model, the project config."""
