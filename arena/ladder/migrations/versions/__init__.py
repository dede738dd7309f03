"""The ladder database's revisions, each a step of the schema that is never edited once released."""
