#!/bin/sh
# Registers Hindsight's Temporal namespace if it does not exist yet. Run by
# the one-shot temporal-namespace service in docker-compose.yml (admin-tools
# image). The temporal CLI reads TEMPORAL_ADDRESS.
#
#   NAMESPACE  the namespace to create (TEMPORAL_NAMESPACE in .env)
#   RETENTION  how long closed workflow histories are kept, e.g. 30d
set -eu

: "${NAMESPACE:?}" "${RETENTION:?}"

# The server's port opens before its services are ready; wait for the
# cluster to report healthy, up to a deadline, instead of failing at once.
deadline=$(($(date +%s) + 120))
until temporal operator cluster health >/dev/null 2>&1; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "temporal-namespace: $TEMPORAL_ADDRESS not healthy after 120s" >&2
		temporal operator cluster health
		exit 1
	fi
	sleep 2
done

if temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
	echo "temporal-namespace: $NAMESPACE exists"
	exit 0
fi
temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" \
	--description "Hindsight: distillation, merge and consolidation workflows"
echo "temporal-namespace: created $NAMESPACE (retention $RETENTION)"
