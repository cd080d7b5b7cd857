"""The bottom layer: reference corpora and responses loaded into typed records that know their source."""
