"""The YAML experiment spec: loading with source positions, validation, building."""
