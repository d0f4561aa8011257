"""Custom fields: the firm's own typed fields on matters and contacts, grouped in field sets per
case type (docs/api-conventions.md#custom-fields, docs/decisions/0025-custom-fields-and-templates.md)."""
