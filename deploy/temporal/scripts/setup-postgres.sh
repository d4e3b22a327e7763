#!/bin/sh
# Creates (or upgrades) Temporal's two PostgreSQL databases and their schemas.
# Run by the one-shot temporal-schema service in docker-compose.yml, with the
# temporalio/admin-tools image whose version matches the server's. Every step
# is idempotent, so it runs again safely on each `docker-compose up`, and an
# image upgrade applies the new schema versions.
#
# Reads SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD (temporal-sql-tool).
set -eu

for db in temporal temporal_visibility; do
	case $db in
	temporal) schema=postgresql/v12/temporal ;;
	*) schema=postgresql/v12/visibility ;;
	esac
	echo "temporal-schema: $db: create database"
	temporal-sql-tool --db "$db" create-database
	echo "temporal-schema: $db: version tables"
	temporal-sql-tool --db "$db" setup-schema -v 0.0
	echo "temporal-schema: $db: update to the latest $schema"
	temporal-sql-tool --db "$db" update-schema --schema-name "$schema"
done
echo "temporal-schema: done"
